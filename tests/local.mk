# tests/local.mk: integration tests that span modules.

-- 001_init.sql: the first schema of the spmvd cache.
-- Migrations are applied in order at start; each ends at the user_version
-- equal to its number (the daemon sets PRAGMA user_version after it).

CREATE TABLE devices (
  device_key      TEXT NOT NULL,
  software_key    TEXT NOT NULL,
  backend         TEXT NOT NULL,
  name            TEXT NOT NULL,
  cc_major        INTEGER NOT NULL DEFAULT 0,
  cc_minor        INTEGER NOT NULL DEFAULT 0,
  sms             INTEGER NOT NULL DEFAULT 0,
  warp_size       INTEGER NOT NULL DEFAULT 0,
  max_threads_per_sm    INTEGER NOT NULL DEFAULT 0,
  max_blocks_per_sm     INTEGER NOT NULL DEFAULT 0,
  max_threads_per_block INTEGER NOT NULL DEFAULT 0,
  mem_bytes       INTEGER NOT NULL DEFAULT 0,
  l2_bytes        INTEGER NOT NULL DEFAULT 0,
  first_seen      INTEGER NOT NULL,
  last_seen       INTEGER NOT NULL,
  PRIMARY KEY (device_key, software_key)
);

CREATE TABLE matrices (
  fingerprint     TEXT PRIMARY KEY,
  rows            INTEGER NOT NULL,
  cols            INTEGER NOT NULL,
  nnz             INTEGER NOT NULL,
  profile         TEXT NOT NULL,          -- JSON, as spmvd_cache_profile_json()
  created         INTEGER NOT NULL
);

CREATE TABLE tunings (
  id              INTEGER PRIMARY KEY,
  fingerprint     TEXT NOT NULL REFERENCES matrices(fingerprint) ON DELETE CASCADE,
  device_key      TEXT NOT NULL,
  software_key    TEXT NOT NULL,
  dtype           TEXT NOT NULL,          -- "f32" or "f64"
  kernel_version  INTEGER NOT NULL,
  format          TEXT NOT NULL,          -- spmv_format_name()
  bs              INTEGER NOT NULL,
  tpr             INTEGER NOT NULL,
  param           INTEGER NOT NULL,
  param2          INTEGER NOT NULL,
  config          TEXT NOT NULL,          -- spmv_config_format()
  time_us         REAL NOT NULL,
  gflops          REAL NOT NULL,
  gbps            REAL NOT NULL,
  strategy        TEXT NOT NULL,
  cost_spmv       REAL NOT NULL,
  created         INTEGER NOT NULL,
  hits            INTEGER NOT NULL DEFAULT 0,
  last_used       INTEGER NOT NULL DEFAULT 0,
  quarantined     INTEGER NOT NULL DEFAULT 0,
  UNIQUE (fingerprint, device_key, software_key, dtype)
);
CREATE INDEX tunings_by_fingerprint ON tunings(fingerprint, dtype);

CREATE TABLE trials (
  tuning_id       INTEGER NOT NULL REFERENCES tunings(id) ON DELETE CASCADE,
  seq             INTEGER NOT NULL,       -- order in which it ran
  config          TEXT NOT NULL,
  status          TEXT NOT NULL,          -- "ok", "dropped", "failed"
  time_us         REAL NOT NULL,
  best_us         REAL NOT NULL,
  rounds          INTEGER NOT NULL,
  runs            INTEGER NOT NULL,
  message         TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (tuning_id, seq)
);

CREATE TABLE quarantine (
  fingerprint     TEXT NOT NULL,
  device_key      TEXT NOT NULL,
  software_key    TEXT NOT NULL,
  dtype           TEXT NOT NULL,
  config          TEXT NOT NULL,
  reason          TEXT NOT NULL DEFAULT '',
  created         INTEGER NOT NULL,
  PRIMARY KEY (fingerprint, device_key, software_key, dtype, config)
);

CREATE TABLE calibrations (
  device_key      TEXT NOT NULL,
  software_key    TEXT NOT NULL,
  dtype           TEXT NOT NULL,
  format          TEXT NOT NULL,
  fit             TEXT NOT NULL,          -- JSON coefficients (spmvd_predict)
  created         INTEGER NOT NULL,
  PRIMARY KEY (device_key, software_key, dtype, format)
);

-- 002_splits.sql: how a matrix split over a set of devices was tuned
-- (issue 54): each row block's local part picks its own configuration on
-- its own device, and the next split load on the same devices takes the
-- picks again without racing them.

CREATE TABLE splits (
  fingerprint     TEXT NOT NULL REFERENCES matrices(fingerprint) ON DELETE CASCADE,
  device_set      TEXT NOT NULL,          -- the blocks' device keys in block order, joined by " | "
  software_key    TEXT NOT NULL,          -- block 0's (the same build on every device)
  dtype           TEXT NOT NULL,          -- "f32" or "f64"
  blocks          INTEGER NOT NULL,
  configs         TEXT NOT NULL,          -- JSON array: each block's spmv_config_format()
  created         INTEGER NOT NULL,
  PRIMARY KEY (fingerprint, device_set, software_key, dtype, blocks)
);

;; A module with an import: UDF modules must be self-contained, so CREATE rejects it.
(module
  (import "env" "log" (func $log (param i64)))
  (func (export "noisy") (param $x i64) (result i64)
    (call $log (local.get $x))
    (local.get $x)))

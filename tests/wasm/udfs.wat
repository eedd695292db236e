;; WebAssembly UDFs the tests and bench/bench_wasm_udf.cpp call (docs/udf-wasm.md).
;; Strings and accumulators travel through guest memory: alloc/dealloc below are a bump
;; allocator that resets when nothing is live (the host frees every buffer after a call).
(module
  (memory (export "memory") 1)
  (global $base i32 (i32.const 1024))
  (global $top (mut i32) (i32.const 1024))
  (global $live (mut i32) (i32.const 0))

  (func $alloc (export "alloc") (param $n i32) (result i32)
    (local $p i32) (local $end i32)
    (local.set $p (global.get $top))
    (local.set $end (i32.add (local.get $p) (i32.and (i32.add (local.get $n) (i32.const 7)) (i32.const -8))))
    (if (i32.gt_u (local.get $end) (i32.mul (memory.size) (i32.const 65536)))
      (then (if (i32.lt_s (memory.grow (i32.add (i32.shr_u (i32.sub (local.get $end) (i32.mul (memory.size) (i32.const 65536))) (i32.const 16)) (i32.const 1))) (i32.const 0))
        (then unreachable))))
    (global.set $top (local.get $end))
    (global.set $live (i32.add (global.get $live) (i32.const 1)))
    (local.get $p))

  (func (export "dealloc") (param $p i32) (param $n i32)
    (global.set $live (i32.sub (global.get $live) (i32.const 1)))
    (if (i32.le_s (global.get $live) (i32.const 0))
      (then (global.set $live (i32.const 0)) (global.set $top (global.get $base)))))

  (func $pack (param $p i32) (param $n i32) (result i64)
    (i64.or (i64.shl (i64.extend_i32_u (local.get $p)) (i64.const 32)) (i64.extend_i32_u (local.get $n))))

  ;; plus(BIGINT, BIGINT) RETURNS BIGINT
  (func (export "plus") (param $a i64) (param $b i64) (result i64)
    (i64.add (local.get $a) (local.get $b)))

  ;; scale(DOUBLE, INT) RETURNS DOUBLE
  (func (export "scale") (param $x f64) (param $k i32) (result f64)
    (f64.mul (local.get $x) (f64.convert_i32_s (local.get $k))))

  ;; shout(STRING) RETURNS STRING: ASCII upper-cased, then '!'
  (func (export "shout") (param $p i32) (param $n i32) (result i64)
    (local $out i32) (local $i i32) (local $c i32)
    (local.set $out (call $alloc (i32.add (local.get $n) (i32.const 1))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $c (i32.load8_u (i32.add (local.get $p) (local.get $i))))
        (if (i32.and (i32.ge_u (local.get $c) (i32.const 97)) (i32.le_u (local.get $c) (i32.const 122)))
          (then (local.set $c (i32.sub (local.get $c) (i32.const 32)))))
        (i32.store8 (i32.add (local.get $out) (local.get $i)) (local.get $c))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (i32.store8 (i32.add (local.get $out) (local.get $n)) (i32.const 33))
    (call $pack (local.get $out) (i32.add (local.get $n) (i32.const 1))))

  ;; spin(BIGINT) RETURNS BIGINT: never returns (the fuel limit stops it)
  (func (export "spin") (param $x i64) (result i64)
    (loop $forever (br $forever))
    (local.get $x))

  ;; sumsq(BIGINT) RETURNS BIGINT, an aggregate: the sum of squares. Accumulator: one i64.
  (func $acc (param $v i64) (result i64)
    (local $q i32)
    (local.set $q (call $alloc (i32.const 8)))
    (i64.store (local.get $q) (local.get $v))
    (call $pack (local.get $q) (i32.const 8)))
  (func (export "sumsq_init") (result i64) (call $acc (i64.const 0)))
  (func (export "sumsq_accumulate") (param $p i32) (param $n i32) (param $x i64) (result i64)
    (call $acc (i64.add (i64.load (local.get $p)) (i64.mul (local.get $x) (local.get $x)))))
  (func (export "sumsq_retract") (param $p i32) (param $n i32) (param $x i64) (result i64)
    (call $acc (i64.sub (i64.load (local.get $p)) (i64.mul (local.get $x) (local.get $x)))))
  (func (export "sumsq_merge") (param $a i32) (param $an i32) (param $b i32) (param $bn i32) (result i64)
    (call $acc (i64.add (i64.load (local.get $a)) (i64.load (local.get $b)))))
  (func (export "sumsq_result") (param $p i32) (param $n i32) (result i64)
    (i64.load (local.get $p)))

  ;; cnt() RETURNS BIGINT, an aggregate with neither retract nor merge: rows counted.
  (func (export "cnt_init") (result i64) (call $acc (i64.const 0)))
  (func (export "cnt_accumulate") (param $p i32) (param $n i32) (result i64)
    (call $acc (i64.add (i64.load (local.get $p)) (i64.const 1))))
  (func (export "cnt_result") (param $p i32) (param $n i32) (result i64)
    (i64.load (local.get $p)))
)

;; Kernels for TF.js's wasm backend, with WebAssembly SIMD (f32x4): batched matrix products
;; (`bmm`), sums over leading or middle axes (`colsum`), and transposes that swap two adjacent
;; groups of axes (`swap`: a matrix transpose, attention's head split and merge).
;;
;; The backend sends batched and transposed matmuls (attention's, and the backward pass's) to a
;; scalar loop (`slow_batch_matmul` in tfjs-backend-wasm/src/cc/batch_mat_mul_impl.cc). This module
;; computes the same products four or eight output columns at a time, with the same arithmetic:
;; for each output element, partial sums over blocks of 48 of the shared dimension, each summed in
;; order from 0 in float32 (products rounded, then added: WebAssembly has no fused multiply-add),
;; then added to the output block after block. So the results are bit for bit the backend's.
;;
;; It owns no memory: it imports the backend's, and reads and writes tensors where the backend
;; keeps them (byte offsets). It has no data segment and no stack, so it touches nothing else.
;;
;; `colsum` sums over a block of axes that is not the innermost: the backend transposes the input
;; so that those axes come last, then sums each output's values in order from 0 in float32
;; (kernels/Sum.cc). This sums the same values in the same order, four outputs at a time, without
;; the transpose: the same bits again.
;;
;; `swap` moves data only (in 8 x 8 tiles, so both sides stay in cache): the same values as the
;; backend's Transpose.
;;
;; Assembled by scripts/build-kernels.ts (wabt) into src/core/tf/kernels/kernels-wasm.ts.
(module
  (import "env" "memory" (memory 0))

  ;; C[i..i+3, j..j+7] += the products over one block of `len` values of the shared dimension.
  ;; pa: A[i, k0]; ar, ac: byte strides of A's rows and of its shared dimension; pb: B[k0, j];
  ;; bn: byte stride of B's rows; pc: C[i, j]; cn: byte stride of C's rows.
  (func $quad8 (param $pa i32) (param $ar i32) (param $ac i32) (param $pb i32) (param $bn i32)
               (param $pc i32) (param $cn i32) (param $len i32)
    (local $s00 v128) (local $s01 v128) (local $s10 v128) (local $s11 v128)
    (local $s20 v128) (local $s21 v128) (local $s30 v128) (local $s31 v128)
    (local $b0 v128) (local $b1 v128) (local $x v128)
    (local $a1 i32) (local $a2 i32) (local $a3 i32)
    (local.set $a1 (i32.add (local.get $pa) (local.get $ar)))
    (local.set $a2 (i32.add (local.get $a1) (local.get $ar)))
    (local.set $a3 (i32.add (local.get $a2) (local.get $ar)))
    (block $done
      (loop $k
        (br_if $done (i32.eqz (local.get $len)))
        (local.set $b0 (v128.load (local.get $pb)))
        (local.set $b1 (v128.load offset=16 (local.get $pb)))
        (local.set $x (f32x4.splat (f32.load (local.get $pa))))
        (local.set $s00 (f32x4.add (local.get $s00) (f32x4.mul (local.get $x) (local.get $b0))))
        (local.set $s01 (f32x4.add (local.get $s01) (f32x4.mul (local.get $x) (local.get $b1))))
        (local.set $x (f32x4.splat (f32.load (local.get $a1))))
        (local.set $s10 (f32x4.add (local.get $s10) (f32x4.mul (local.get $x) (local.get $b0))))
        (local.set $s11 (f32x4.add (local.get $s11) (f32x4.mul (local.get $x) (local.get $b1))))
        (local.set $x (f32x4.splat (f32.load (local.get $a2))))
        (local.set $s20 (f32x4.add (local.get $s20) (f32x4.mul (local.get $x) (local.get $b0))))
        (local.set $s21 (f32x4.add (local.get $s21) (f32x4.mul (local.get $x) (local.get $b1))))
        (local.set $x (f32x4.splat (f32.load (local.get $a3))))
        (local.set $s30 (f32x4.add (local.get $s30) (f32x4.mul (local.get $x) (local.get $b0))))
        (local.set $s31 (f32x4.add (local.get $s31) (f32x4.mul (local.get $x) (local.get $b1))))
        (local.set $pa (i32.add (local.get $pa) (local.get $ac)))
        (local.set $a1 (i32.add (local.get $a1) (local.get $ac)))
        (local.set $a2 (i32.add (local.get $a2) (local.get $ac)))
        (local.set $a3 (i32.add (local.get $a3) (local.get $ac)))
        (local.set $pb (i32.add (local.get $pb) (local.get $bn)))
        (local.set $len (i32.sub (local.get $len) (i32.const 1)))
        (br $k)))
    (v128.store (local.get $pc) (f32x4.add (v128.load (local.get $pc)) (local.get $s00)))
    (v128.store offset=16 (local.get $pc) (f32x4.add (v128.load offset=16 (local.get $pc)) (local.get $s01)))
    (local.set $pc (i32.add (local.get $pc) (local.get $cn)))
    (v128.store (local.get $pc) (f32x4.add (v128.load (local.get $pc)) (local.get $s10)))
    (v128.store offset=16 (local.get $pc) (f32x4.add (v128.load offset=16 (local.get $pc)) (local.get $s11)))
    (local.set $pc (i32.add (local.get $pc) (local.get $cn)))
    (v128.store (local.get $pc) (f32x4.add (v128.load (local.get $pc)) (local.get $s20)))
    (v128.store offset=16 (local.get $pc) (f32x4.add (v128.load offset=16 (local.get $pc)) (local.get $s21)))
    (local.set $pc (i32.add (local.get $pc) (local.get $cn)))
    (v128.store (local.get $pc) (f32x4.add (v128.load (local.get $pc)) (local.get $s30)))
    (v128.store offset=16 (local.get $pc) (f32x4.add (v128.load offset=16 (local.get $pc)) (local.get $s31))))

  ;; C[i, j..j+7] += one block's products, for one row (arguments as $quad8's).
  (func $row8 (param $pa i32) (param $ac i32) (param $pb i32) (param $bn i32) (param $pc i32) (param $len i32)
    (local $s0 v128) (local $s1 v128) (local $x v128)
    (block $done
      (loop $k
        (br_if $done (i32.eqz (local.get $len)))
        (local.set $x (f32x4.splat (f32.load (local.get $pa))))
        (local.set $s0 (f32x4.add (local.get $s0) (f32x4.mul (local.get $x) (v128.load (local.get $pb)))))
        (local.set $s1 (f32x4.add (local.get $s1) (f32x4.mul (local.get $x) (v128.load offset=16 (local.get $pb)))))
        (local.set $pa (i32.add (local.get $pa) (local.get $ac)))
        (local.set $pb (i32.add (local.get $pb) (local.get $bn)))
        (local.set $len (i32.sub (local.get $len) (i32.const 1)))
        (br $k)))
    (v128.store (local.get $pc) (f32x4.add (v128.load (local.get $pc)) (local.get $s0)))
    (v128.store offset=16 (local.get $pc) (f32x4.add (v128.load offset=16 (local.get $pc)) (local.get $s1))))

  ;; C[i, j..j+3] += one block's products, for one row.
  (func $row4 (param $pa i32) (param $ac i32) (param $pb i32) (param $bn i32) (param $pc i32) (param $len i32)
    (local $s v128)
    (block $done
      (loop $k
        (br_if $done (i32.eqz (local.get $len)))
        (local.set $s (f32x4.add (local.get $s)
          (f32x4.mul (f32x4.splat (f32.load (local.get $pa))) (v128.load (local.get $pb)))))
        (local.set $pa (i32.add (local.get $pa) (local.get $ac)))
        (local.set $pb (i32.add (local.get $pb) (local.get $bn)))
        (local.set $len (i32.sub (local.get $len) (i32.const 1)))
        (br $k)))
    (v128.store (local.get $pc) (f32x4.add (v128.load (local.get $pc)) (local.get $s))))

  ;; C[i, j] += one block's products (a column left over after the blocks of 8 and 4).
  (func $row1 (param $pa i32) (param $ac i32) (param $pb i32) (param $bn i32) (param $pc i32) (param $len i32)
    (local $s f32)
    (block $done
      (loop $k
        (br_if $done (i32.eqz (local.get $len)))
        (local.set $s (f32.add (local.get $s) (f32.mul (f32.load (local.get $pa)) (f32.load (local.get $pb)))))
        (local.set $pa (i32.add (local.get $pa) (local.get $ac)))
        (local.set $pb (i32.add (local.get $pb) (local.get $bn)))
        (local.set $len (i32.sub (local.get $len) (i32.const 1)))
        (br $k)))
    (f32.store (local.get $pc) (f32.add (f32.load (local.get $pc)) (local.get $s))))

  ;; Columns j0.. of row i for one block: blocks of 8, then 4, then single columns.
  (func $rowTail (param $pa i32) (param $ac i32) (param $pb i32) (param $bn i32) (param $pc i32)
                 (param $n i32) (param $j i32) (param $len i32)
    (block $d8 (loop $l8
      (br_if $d8 (i32.gt_u (i32.add (local.get $j) (i32.const 8)) (local.get $n)))
      (call $row8 (local.get $pa) (local.get $ac)
        (i32.add (local.get $pb) (i32.shl (local.get $j) (i32.const 2))) (local.get $bn)
        (i32.add (local.get $pc) (i32.shl (local.get $j) (i32.const 2))) (local.get $len))
      (local.set $j (i32.add (local.get $j) (i32.const 8)))
      (br $l8)))
    (block $d4 (loop $l4
      (br_if $d4 (i32.gt_u (i32.add (local.get $j) (i32.const 4)) (local.get $n)))
      (call $row4 (local.get $pa) (local.get $ac)
        (i32.add (local.get $pb) (i32.shl (local.get $j) (i32.const 2))) (local.get $bn)
        (i32.add (local.get $pc) (i32.shl (local.get $j) (i32.const 2))) (local.get $len))
      (local.set $j (i32.add (local.get $j) (i32.const 4)))
      (br $l4)))
    (block $d1 (loop $l1
      (br_if $d1 (i32.ge_u (local.get $j) (local.get $n)))
      (call $row1 (local.get $pa) (local.get $ac)
        (i32.add (local.get $pb) (i32.shl (local.get $j) (i32.const 2))) (local.get $bn)
        (i32.add (local.get $pc) (i32.shl (local.get $j) (i32.const 2))) (local.get $len))
      (local.set $j (i32.add (local.get $j) (i32.const 1)))
      (br $l1))))

  ;; One product C[m, n] = A B, with B row-major [k, n] and A read through byte strides (ar per
  ;; row, ac per shared index: A or its transpose). C is zeroed, then each block of 48 shared
  ;; indices adds its partial sums.
  (func $mm (param $a i32) (param $b i32) (param $c i32) (param $m i32) (param $k i32) (param $n i32)
            (param $ar i32) (param $ac i32)
    (local $bn i32) (local $k0 i32) (local $len i32) (local $pa i32) (local $pb i32)
    (local $i i32) (local $j i32) (local $r i32)
    (local.set $bn (i32.shl (local.get $n) (i32.const 2)))
    (memory.fill (local.get $c) (i32.const 0) (i32.mul (local.get $m) (local.get $bn)))
    (block $kd (loop $kl
      (br_if $kd (i32.ge_u (local.get $k0) (local.get $k)))
      (local.set $len (i32.sub (local.get $k) (local.get $k0)))
      (if (i32.gt_u (local.get $len) (i32.const 48)) (then (local.set $len (i32.const 48))))
      (local.set $pa (i32.add (local.get $a) (i32.mul (local.get $k0) (local.get $ac))))
      (local.set $pb (i32.add (local.get $b) (i32.mul (local.get $k0) (local.get $bn))))
      ;; Rows four at a time: columns eight at a time, then the row tails one row at a time.
      (local.set $i (i32.const 0))
      (block $id (loop $il
        (br_if $id (i32.gt_u (i32.add (local.get $i) (i32.const 4)) (local.get $m)))
        (local.set $j (i32.const 0))
        (block $jd (loop $jl
          (br_if $jd (i32.gt_u (i32.add (local.get $j) (i32.const 8)) (local.get $n)))
          (call $quad8
            (i32.add (local.get $pa) (i32.mul (local.get $i) (local.get $ar))) (local.get $ar) (local.get $ac)
            (i32.add (local.get $pb) (i32.shl (local.get $j) (i32.const 2))) (local.get $bn)
            (i32.add (local.get $c)
              (i32.add (i32.mul (local.get $i) (local.get $bn)) (i32.shl (local.get $j) (i32.const 2))))
            (local.get $bn) (local.get $len))
          (local.set $j (i32.add (local.get $j) (i32.const 8)))
          (br $jl)))
        (local.set $r (i32.const 0))
        (block $rd (loop $rl
          (br_if $rd (i32.ge_u (local.get $r) (i32.const 4)))
          (call $rowTail
            (i32.add (local.get $pa) (i32.mul (i32.add (local.get $i) (local.get $r)) (local.get $ar)))
            (local.get $ac) (local.get $pb) (local.get $bn)
            (i32.add (local.get $c) (i32.mul (i32.add (local.get $i) (local.get $r)) (local.get $bn)))
            (local.get $n) (local.get $j) (local.get $len))
          (local.set $r (i32.add (local.get $r) (i32.const 1)))
          (br $rl)))
        (local.set $i (i32.add (local.get $i) (i32.const 4)))
        (br $il)))
      ;; The rows left over, one at a time.
      (block $td (loop $tl
        (br_if $td (i32.ge_u (local.get $i) (local.get $m)))
        (call $rowTail
          (i32.add (local.get $pa) (i32.mul (local.get $i) (local.get $ar)))
          (local.get $ac) (local.get $pb) (local.get $bn)
          (i32.add (local.get $c) (i32.mul (local.get $i) (local.get $bn)))
          (local.get $n) (i32.const 0) (local.get $len))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $tl)))
      (local.set $k0 (i32.add (local.get $k0) (i32.const 48)))
      (br $kl))))

  ;; dst[k, n] = src[n, k] (a B stored transposed, made row-major for $mm).
  (func $transpose (param $src i32) (param $dst i32) (param $k i32) (param $n i32)
    (local $j i32) (local $q i32) (local $p i32)
    (block $jd (loop $jl
      (br_if $jd (i32.ge_u (local.get $j) (local.get $n)))
      (local.set $p (i32.add (local.get $src) (i32.shl (i32.mul (local.get $j) (local.get $k)) (i32.const 2))))
      (local.set $q (i32.const 0))
      (block $qd (loop $ql
        (br_if $qd (i32.ge_u (local.get $q) (local.get $k)))
        (f32.store
          (i32.add (local.get $dst)
            (i32.shl (i32.add (i32.mul (local.get $q) (local.get $n)) (local.get $j)) (i32.const 2)))
          (f32.load (local.get $p)))
        (local.set $p (i32.add (local.get $p) (i32.const 4)))
        (local.set $q (i32.add (local.get $q) (i32.const 1)))
        (br $ql)))
      (local.set $j (i32.add (local.get $j) (i32.const 1)))
      (br $jl))))

  ;; out[o, j] = sum over r < rows of x[o, r, j], for o < outer and j < inner (x and out: byte
  ;; offsets of float32 arrays [outer, rows, inner] and [outer, inner]). Sixteen columns at a time
  ;; in four independent sums, then four, then one: each output summed over r in order from 0.
  (func (export "colsum") (param $x i32) (param $out i32) (param $outer i32) (param $rows i32) (param $inner i32)
    (local $o i32) (local $j i32) (local $r i32) (local $p i32) (local $stride i32) (local $base i32)
    (local $s0 v128) (local $s1 v128) (local $s2 v128) (local $s3 v128) (local $s f32)
    (local.set $stride (i32.shl (local.get $inner) (i32.const 2)))
    (block $od (loop $ol
      (br_if $od (i32.ge_u (local.get $o) (local.get $outer)))
      (local.set $base (i32.add (local.get $x) (i32.mul (i32.mul (local.get $o) (local.get $rows)) (local.get $stride))))
      (local.set $j (i32.const 0))
      (block $d16 (loop $l16
        (br_if $d16 (i32.gt_u (i32.add (local.get $j) (i32.const 16)) (local.get $inner)))
        (local.set $s0 (v128.const i32x4 0 0 0 0))
        (local.set $s1 (v128.const i32x4 0 0 0 0))
        (local.set $s2 (v128.const i32x4 0 0 0 0))
        (local.set $s3 (v128.const i32x4 0 0 0 0))
        (local.set $p (i32.add (local.get $base) (i32.shl (local.get $j) (i32.const 2))))
        (local.set $r (i32.const 0))
        (block $rd (loop $rl
          (br_if $rd (i32.ge_u (local.get $r) (local.get $rows)))
          (local.set $s0 (f32x4.add (local.get $s0) (v128.load (local.get $p))))
          (local.set $s1 (f32x4.add (local.get $s1) (v128.load offset=16 (local.get $p))))
          (local.set $s2 (f32x4.add (local.get $s2) (v128.load offset=32 (local.get $p))))
          (local.set $s3 (f32x4.add (local.get $s3) (v128.load offset=48 (local.get $p))))
          (local.set $p (i32.add (local.get $p) (local.get $stride)))
          (local.set $r (i32.add (local.get $r) (i32.const 1)))
          (br $rl)))
        (local.set $p (i32.add (local.get $out)
          (i32.shl (i32.add (i32.mul (local.get $o) (local.get $inner)) (local.get $j)) (i32.const 2))))
        (v128.store (local.get $p) (local.get $s0))
        (v128.store offset=16 (local.get $p) (local.get $s1))
        (v128.store offset=32 (local.get $p) (local.get $s2))
        (v128.store offset=48 (local.get $p) (local.get $s3))
        (local.set $j (i32.add (local.get $j) (i32.const 16)))
        (br $l16)))
      (block $d4 (loop $l4
        (br_if $d4 (i32.gt_u (i32.add (local.get $j) (i32.const 4)) (local.get $inner)))
        (local.set $s0 (v128.const i32x4 0 0 0 0))
        (local.set $p (i32.add (local.get $base) (i32.shl (local.get $j) (i32.const 2))))
        (local.set $r (i32.const 0))
        (block $rd4 (loop $rl4
          (br_if $rd4 (i32.ge_u (local.get $r) (local.get $rows)))
          (local.set $s0 (f32x4.add (local.get $s0) (v128.load (local.get $p))))
          (local.set $p (i32.add (local.get $p) (local.get $stride)))
          (local.set $r (i32.add (local.get $r) (i32.const 1)))
          (br $rl4)))
        (v128.store
          (i32.add (local.get $out)
            (i32.shl (i32.add (i32.mul (local.get $o) (local.get $inner)) (local.get $j)) (i32.const 2)))
          (local.get $s0))
        (local.set $j (i32.add (local.get $j) (i32.const 4)))
        (br $l4)))
      (block $d1 (loop $l1
        (br_if $d1 (i32.ge_u (local.get $j) (local.get $inner)))
        (local.set $s (f32.const 0))
        (local.set $p (i32.add (local.get $base) (i32.shl (local.get $j) (i32.const 2))))
        (local.set $r (i32.const 0))
        (block $rd1 (loop $rl1
          (br_if $rd1 (i32.ge_u (local.get $r) (local.get $rows)))
          (local.set $s (f32.add (local.get $s) (f32.load (local.get $p))))
          (local.set $p (i32.add (local.get $p) (local.get $stride)))
          (local.set $r (i32.add (local.get $r) (i32.const 1)))
          (br $rl1)))
        (f32.store
          (i32.add (local.get $out)
            (i32.shl (i32.add (i32.mul (local.get $o) (local.get $inner)) (local.get $j)) (i32.const 2)))
          (local.get $s))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $l1)))
      (local.set $o (i32.add (local.get $o) (i32.const 1)))
      (br $ol))))

  ;; dst[o, b, a, :] = src[o, a, b, :] for o < outer, a < na, b < nb, where `:` is `inner` floats
  ;; (byte offsets; float32). Tiles of 8 x 8 (a, b); each element copied as one float, as vectors
  ;; when `inner` is a multiple of 4, else with memory.copy.
  (func (export "swap") (param $src i32) (param $dst i32) (param $outer i32) (param $na i32) (param $nb i32)
        (param $inner i32)
    (local $ib i32) (local $plane i32) (local $o i32) (local $a0 i32) (local $b0 i32) (local $a i32) (local $b i32)
    (local $ae i32) (local $be i32) (local $ps i32) (local $pd i32) (local $q i32)
    (local.set $ib (i32.shl (local.get $inner) (i32.const 2)))
    (local.set $plane (i32.mul (i32.mul (local.get $na) (local.get $nb)) (local.get $ib)))
    (block $od (loop $ol
      (br_if $od (i32.ge_u (local.get $o) (local.get $outer)))
      (local.set $a0 (i32.const 0))
      (block $a0d (loop $a0l
        (br_if $a0d (i32.ge_u (local.get $a0) (local.get $na)))
        (local.set $ae (i32.add (local.get $a0) (i32.const 8)))
        (if (i32.gt_u (local.get $ae) (local.get $na)) (then (local.set $ae (local.get $na))))
        (local.set $b0 (i32.const 0))
        (block $b0d (loop $b0l
          (br_if $b0d (i32.ge_u (local.get $b0) (local.get $nb)))
          (local.set $be (i32.add (local.get $b0) (i32.const 8)))
          (if (i32.gt_u (local.get $be) (local.get $nb)) (then (local.set $be (local.get $nb))))
          (local.set $a (local.get $a0))
          (block $ad (loop $al
            (br_if $ad (i32.ge_u (local.get $a) (local.get $ae)))
            (local.set $b (local.get $b0))
            (block $bd (loop $bl
              (br_if $bd (i32.ge_u (local.get $b) (local.get $be)))
              (local.set $ps (i32.add (local.get $src)
                (i32.mul (i32.add (i32.mul (local.get $a) (local.get $nb)) (local.get $b)) (local.get $ib))))
              (local.set $pd (i32.add (local.get $dst)
                (i32.mul (i32.add (i32.mul (local.get $b) (local.get $na)) (local.get $a)) (local.get $ib))))
              (if (i32.eq (local.get $inner) (i32.const 1))
                (then (f32.store (local.get $pd) (f32.load (local.get $ps))))
                (else
                  (if (i32.eqz (i32.and (local.get $inner) (i32.const 3)))
                    (then
                      (local.set $q (i32.const 0))
                      (block $vd (loop $vl
                        (br_if $vd (i32.ge_u (local.get $q) (local.get $ib)))
                        (v128.store (i32.add (local.get $pd) (local.get $q))
                          (v128.load (i32.add (local.get $ps) (local.get $q))))
                        (local.set $q (i32.add (local.get $q) (i32.const 16)))
                        (br $vl))))
                    (else (memory.copy (local.get $pd) (local.get $ps) (local.get $ib))))))
              (local.set $b (i32.add (local.get $b) (i32.const 1)))
              (br $bl)))
            (local.set $a (i32.add (local.get $a) (i32.const 1)))
            (br $al)))
          (local.set $b0 (i32.add (local.get $b0) (i32.const 8)))
          (br $b0l)))
        (local.set $a0 (i32.add (local.get $a0) (i32.const 8)))
        (br $a0l)))
      (local.set $src (i32.add (local.get $src) (local.get $plane)))
      (local.set $dst (i32.add (local.get $dst) (local.get $plane)))
      (local.set $o (i32.add (local.get $o) (i32.const 1)))
      (br $ol))))

  ;; out[b] = A[b] B[b] for b < batch. a, b, out, scratch: byte offsets in memory; sa, sb: byte
  ;; strides between batches (0: the one matrix is shared); ar, ac: A's byte strides (row, shared
  ;; index); tb: 1 when each B is stored [n, k] (transposed), copied to scratch ([k, n] floats) first.
  (func (export "bmm") (param $a i32) (param $b i32) (param $out i32) (param $batch i32)
        (param $m i32) (param $k i32) (param $n i32) (param $sa i32) (param $sb i32)
        (param $ar i32) (param $ac i32) (param $tb i32) (param $scratch i32)
    (local $i i32) (local $pb i32) (local $cn i32)
    (local.set $cn (i32.shl (i32.mul (local.get $m) (local.get $n)) (i32.const 2)))
    (block $d (loop $l
      (br_if $d (i32.ge_u (local.get $i) (local.get $batch)))
      (local.set $pb (i32.add (local.get $b) (i32.mul (local.get $i) (local.get $sb))))
      (if (local.get $tb)
        (then
          (call $transpose (local.get $pb) (local.get $scratch) (local.get $k) (local.get $n))
          (local.set $pb (local.get $scratch))))
      (call $mm
        (i32.add (local.get $a) (i32.mul (local.get $i) (local.get $sa)))
        (local.get $pb)
        (i32.add (local.get $out) (i32.mul (local.get $i) (local.get $cn)))
        (local.get $m) (local.get $k) (local.get $n) (local.get $ar) (local.get $ac))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $l))))
)

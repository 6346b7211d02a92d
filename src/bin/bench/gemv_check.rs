//! The check behind every timed gemv row: one more call with y poisoned (NaN), then outputs
//! compared exactly with an f64 reference, so that a row never times a kernel that computes
//! something else or leaves outputs unwritten.
//!
//! Exact because of the inputs: A is [`a_value`] (multiples of 1/8 in ±3/4) and x is
//! [`x_value`] (multiples of 1/4 in [0, 1]), both exact in f16, bf16 and f32, so every product
//! is a multiple of 1/32 and every partial sum of up to [`MAX_EXACT_TERMS`] products is exact in
//! f32 whatever the order; the reference rounds the exact sum once to y's type, as the kernel's
//! final store does.
use crate::gemv_shapes::GemvShape;
use crate::harness::{a_value, x_value};
use cudakernels::Op;

/// What the check asks of y's element type: a default to download into, equality, and a
/// printable value for the mismatch.
pub trait Output: Copy + Default + PartialEq + std::fmt::Debug {}
impl<T: Copy + Default + PartialEq + std::fmt::Debug> Output for T {}

/// Multiply-adds the check of one row recomputes at most: every output where the problem is
/// smaller, else outputs spread over the batch (0.1 s or so on one core).
const CHECK_MACS: usize = 1 << 25;

/// Products a dot may sum and stay exact in f32: |sum| ≤ 3/4 · terms in steps of 1/32 must fit in
/// 24 bits.
pub const MAX_EXACT_TERMS: usize = (1 << 24) / 24;

/// The outputs (indices into y, every problem's) the check compares: all of them when the
/// multiply-adds fit [`CHECK_MACS`], else an odd stride apart (so the sample lands on every
/// position within a vector of outputs) and the last.
pub fn sampled_outputs(outputs: usize, terms: usize) -> Vec<usize> {
    let count = (CHECK_MACS / terms.max(1)).max(1);
    if count >= outputs {
        return (0..outputs).collect();
    }
    let stride = (outputs / count) | 1;
    let mut picked: Vec<usize> = (0..outputs).step_by(stride).collect();
    if picked.last() != Some(&(outputs - 1)) {
        picked.push(outputs - 1);
    }
    picked
}

/// Output `i` (of every problem's, problems back to back) of `op` on the bench's inputs with
/// alpha 1 and beta 0: A row-major m × n per problem, x and y of the problem's length.
pub fn reference(shape: GemvShape, op: Op, i: usize) -> f64 {
    let GemvShape { m, n, .. } = shape;
    let (x_len, y_len) = shape.lens(op);
    let (problem, out) = (i / y_len, i % y_len);
    let a = |r: usize, c: usize| a_value(problem * m * n + r * n + c) as f64;
    let x = |k: usize| x_value(problem * x_len + k) as f64;
    match op {
        Op::N => (0..n).map(|c| a(out, c) * x(c)).sum(),
        Op::T => (0..m).map(|r| a(r, out) * x(r)).sum(),
    }
}

/// Every sampled output of `got` (y of `shape` and `op`, every problem's) against the
/// reference rounded to y's type by `y_of`; the first mismatch, described.
pub fn mismatch<Y: Output>(shape: GemvShape, op: Op, got: &[Y], y_of: fn(f32) -> Y) -> Option<String> {
    let terms = shape.lens(op).0;
    assert!(terms <= MAX_EXACT_TERMS, "the check is exact for dots of {} terms at most", MAX_EXACT_TERMS);
    sampled_outputs(got.len(), terms).into_iter().find_map(|i| {
        let want = y_of(reference(shape, op, i) as f32);
        (got[i] != want).then(|| format!("y[{}] = {:?}, expected {:?}", i, got[i], want))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_problems_check_every_output_and_large_ones_a_spread_with_the_last() {
        assert_eq!(sampled_outputs(7, 100), (0..7).collect::<Vec<_>>());
        let picked = sampled_outputs(4096, 128256);
        assert!(picked.len() > 200 && picked.len() < 300, "{}", picked.len());
        assert_eq!((picked[0], *picked.last().unwrap()), (0, 4095));
        let stride = picked[1] - picked[0];
        assert_eq!(stride % 2, 1, "an odd stride reaches every position of a vector of outputs");
        assert!(picked.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn the_reference_is_the_dot_of_the_bench_inputs() {
        let shape = GemvShape { batch: 2, m: 3, n: 5 };
        // Problem 1, row 2 of Op::N; column 4 of Op::T.
        let n: f64 = (0..5).map(|c| a_value(15 + 10 + c) as f64 * x_value(5 + c) as f64).sum();
        assert_eq!(reference(shape, Op::N, 3 + 2), n);
        let t: f64 = (0..3).map(|r| a_value(15 + r * 5 + 4) as f64 * x_value(3 + r) as f64).sum();
        assert_eq!(reference(shape, Op::T, 5 + 4), t);
    }

    #[test]
    fn a_y_summed_in_f32_in_another_order_passes_and_a_poisoned_or_wrong_one_does_not() {
        let shape = GemvShape { batch: 3, m: 300, n: 72 };
        for &op in [Op::N, Op::T].iter() {
            let (x_len, y_len) = shape.lens(op);
            // Each dot in f32, last term first, as no kernel sums it.
            let y: Vec<f32> = (0..3 * y_len)
                .map(|i| {
                    let (p, o) = (i / y_len, i % y_len);
                    let a = |k: usize| {
                        let (r, c) = if op == Op::N { (o, k) } else { (k, o) };
                        a_value(p * 300 * 72 + r * 72 + c)
                    };
                    (0..x_len).rev().fold(0.0f32, |acc, k| acc + a(k) * x_value(p * x_len + k))
                })
                .collect();
            assert_eq!(mismatch(shape, op, &y, |v| v), None);
            let halves: Vec<_> = y.iter().map(|&v| cudakernels::bf16::from_f32(v)).collect();
            assert_eq!(mismatch(shape, op, &halves, cudakernels::bf16::from_f32), None);
            let mut poisoned = y.clone();
            poisoned[y_len + 5] = f32::NAN;
            assert!(mismatch(shape, op, &poisoned, |v| v).unwrap().starts_with(&format!("y[{}]", y_len + 5)));
            let mut wrong = y;
            wrong[2 * y_len - 1] += 0.25;
            assert!(mismatch(shape, op, &wrong, |v| v).is_some());
        }
    }

    #[test]
    fn the_inputs_are_exact_in_every_type_and_the_longest_bench_dot_is_exact() {
        for i in 0..13 * 5 {
            let (a, x) = (a_value(i), x_value(i));
            assert_eq!((a * 8.0).fract(), 0.0);
            assert!(a.abs() <= 0.75 && (0.0..=1.0).contains(&x));
            assert_eq!((x * 4.0).fract(), 0.0);
            assert_eq!(cudakernels::bf16::from_f32(a).to_f32(), a);
            assert_eq!(cudakernels::f16::from_f32(a).to_f32(), a);
            assert_eq!(cudakernels::bf16::from_f32(x).to_f32(), x);
        }
        let shapes = crate::gemv_shapes::in_set("llama").into_iter().chain(crate::gemv_shapes::in_set("attention"));
        let longest = shapes.map(|s| s.m.max(s.n)).max().unwrap();
        assert!(longest <= MAX_EXACT_TERMS, "{} > {}", longest, MAX_EXACT_TERMS);
    }
}

//! sgemv on the GPU for the shapes of issue 12 and awkward views (data/sgemv_shapes.csv), both
//! ops, every kernel that takes them, against an f64 CPU reference. y is poisoned (NaN) before
//! every run, so an unwritten output fails.
//!
//! The large shapes use exact data: A and x hold multiples of 1/4 in [-1, 1], so every partial
//! sum is a multiple of 1/16 below 2^20 in magnitude (sums of ≤ 2^20 products ≤ 1) and f32
//! holds it exactly: any order of summation gives the f64 result, compared with `==`. Random
//! data with alpha and beta is checked with a bound from the summation depth.
mod common;
use common::{download, gpu, upload, Rng, U32};
use cudakernels::cust::memory::DeviceSlice;
use cudakernels::{Error, GpuStream, Op, SgemvKernel, SgemvOptions};

#[path = "../src/sgemv_shapes.rs"]
mod sgemv_shapes;

/// The shapes of issue 12 (set `issue` of data/sgemv_shapes.csv): all 15, aligned.
fn issue_shapes() -> Vec<sgemv_shapes::Case> {
    let cases = sgemv_shapes::in_set("issue");
    assert_eq!(cases.len(), 15, "the issue's shapes");
    assert!(cases.iter().all(|c| c.pad == 0 && c.a_offset == 0 && c.x_offset == 0), "aligned shapes");
    cases
}

/// Awkward views (set `views`): all 19.
fn awkward_views() -> Vec<sgemv_shapes::Case> {
    let cases = sgemv_shapes::in_set("views");
    assert_eq!(cases.len(), 19, "the awkward views");
    cases
}

/// One problem on the host: A (m rows of stride lda), x, y0; f64 reference of either op.
struct Problem {
    m: usize,
    n: usize,
    lda: usize,
    a: Vec<f32>,
    x: Vec<f32>,
    y0: Vec<f32>,
}

impl Problem {
    fn new(m: usize, n: usize, lda: usize, op: Op, rng: &mut Rng, value: &mut dyn FnMut(&mut Rng) -> f32) -> Problem {
        let a_len = if m == 0 { 0 } else { (m - 1) * lda + n };
        let (x_len, y_len) = if op == Op::N { (n, m) } else { (m, n) };
        let a = (0..a_len).map(|_| value(rng)).collect();
        let x = (0..x_len).map(|_| value(rng)).collect();
        let y0 = (0..y_len).map(|_| value(rng)).collect();
        Problem { m, n, lda, a, x, y0 }
    }

    /// (f64 op(A)·x, Σ|a·x|) per output.
    fn reference(&self, op: Op) -> (Vec<f64>, Vec<f64>) {
        let outs = if op == Op::N { self.m } else { self.n };
        let (mut dot, mut abs) = (vec![0.0f64; outs], vec![0.0f64; outs]);
        for r in 0..self.m {
            let row = &self.a[r * self.lda..r * self.lda + self.n];
            match op {
                Op::N => {
                    for (&a, &x) in row.iter().zip(&self.x) {
                        dot[r] += a as f64 * x as f64;
                        abs[r] += (a as f64 * x as f64).abs();
                    }
                }
                Op::T => {
                    let xr = self.x[r] as f64;
                    for (j, &a) in row.iter().enumerate() {
                        dot[j] += a as f64 * xr;
                        abs[j] += (a as f64 * xr).abs();
                    }
                }
            }
        }
        (dot, abs)
    }
}

/// Multiples of 1/4 in [-1, 1]: sums of up to 2^20 products are exact in f32.
fn quarter(rng: &mut Rng) -> f32 {
    (rng.below(9) as f32 - 4.0) * 0.25
}

fn uniform(rng: &mut Rng) -> f32 {
    rng.range(-1.0, 1.0) as f32
}

/// Runs `kernel` for `op` on device views of A and x; y starts as NaN (beta = 0) or y0.
#[allow(clippy::too_many_arguments)]
fn run(
    gpu: &GpuStream,
    p: &Problem,
    op: Op,
    a: &DeviceSlice<f32>,
    x: &DeviceSlice<f32>,
    kernel: SgemvKernel,
    alpha: f32,
    beta: f32,
) -> Result<Vec<f32>, Error> {
    let poison = if beta == 0.0 { vec![f32::NAN; p.y0.len()] } else { p.y0.clone() };
    let mut y = upload(&poison);
    gpu.sgemv(
        p.m,
        p.n,
        a,
        x,
        &mut y,
        SgemvOptions { alpha, beta, lda: Some(p.lda), kernel, op, ..SgemvOptions::default() },
    )?;
    Ok(download(gpu, &y))
}

/// Kernels to try for `op`: Auto first, then every named kernel of that op.
fn kernels(op: Op) -> Vec<SgemvKernel> {
    std::iter::once(SgemvKernel::Auto).chain(SgemvKernel::explicit().filter(|k| k.op() == op)).collect()
}

/// Runs every kernel of `op` that accepts the views; exact comparison. Returns how many ran.
fn check_exact(gpu: &GpuStream, p: &Problem, op: Op, offsets: (usize, usize), seed: u64) -> usize {
    let (da, dx) = (upload(&p.a_with_offset(offsets.0)), upload(&p.x_with_offset(offsets.1)));
    let (va, vx) = (da.index(offsets.0..), dx.index(offsets.1..));
    let (want, _) = p.reference(op);
    let mut ran = 0;
    for k in kernels(op) {
        let what = format!("seed {} {:?} {:?} m {} n {} lda {} offsets {:?}", seed, op, k, p.m, p.n, p.lda, offsets);
        match run(gpu, p, op, &va, &vx, k, 1.0, 0.0) {
            Ok(y) => {
                for (i, (&g, &w)) in y.iter().zip(&want).enumerate() {
                    assert!(g as f64 == w, "{}: y[{}] = {}, want {}", what, i, g, w);
                }
                ran += 1;
            }
            Err(Error::Unsupported { .. }) | Err(Error::Misaligned { .. }) if k != SgemvKernel::Auto => {}
            Err(e) => panic!("{}: {}", what, e),
        }
    }
    ran
}

impl Problem {
    fn a_with_offset(&self, off: usize) -> Vec<f32> {
        std::iter::repeat(0.0).take(off).chain(self.a.iter().copied()).collect()
    }
    fn x_with_offset(&self, off: usize) -> Vec<f32> {
        std::iter::repeat(0.0).take(off).chain(self.x.iter().copied()).collect()
    }
}

#[test]
fn issue_shapes_both_ops_every_kernel() {
    let shapes = issue_shapes();
    let handle = match gpu("issue_shapes_both_ops_every_kernel") {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let mut rng = Rng::fresh("sgemv_issue_shapes");
    let seed = rng.seed;
    for c in shapes {
        let (m, n) = (c.m, c.n);
        for &op in [Op::N, Op::T].iter() {
            let p = Problem::new(m, n, n, op, &mut rng, &mut quarter);
            let ran = check_exact(gpu, &p, op, (0, 0), seed);
            assert!(ran >= 2, "{:?} {} x {}: only {} kernels ran", op, m, n, ran);
        }
    }
}

#[test]
fn awkward_views_both_ops() {
    let views = awkward_views();
    let handle = match gpu("awkward_views_both_ops") {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let mut rng = Rng::fresh("sgemv_awkward");
    let seed = rng.seed;
    for c in views {
        let (m, n) = (c.m, c.n);
        for &op in [Op::N, Op::T].iter() {
            let p = Problem::new(m, n, c.lda(), op, &mut rng, &mut quarter);
            assert!(check_exact(gpu, &p, op, (c.a_offset, c.x_offset), seed) >= 2, "{:?} {} x {}", op, m, n);
        }
    }
}

#[test]
fn transposed_alpha_beta_and_lda_with_random_data() {
    let handle = match gpu("transposed_alpha_beta_and_lda_with_random_data") {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let mut rng = Rng::fresh("sgemv_t_alpha_beta");
    let seed = rng.seed;
    for &(m, n) in
        [(7usize, 16usize), (255, 32), (16387, 128), (9, 129), (300, 1000), (8, 4096), (16384, 4), (33, 3)].iter()
    {
        for &pad in [0usize, 1, 4].iter() {
            for &(alpha, beta) in [(1.0f32, 0.0f32), (1.5, -0.75), (-2.0, 1.0), (0.0, 0.5)].iter() {
                for &op in [Op::N, Op::T].iter() {
                    let p = Problem::new(m, n, n + pad, op, &mut rng, &mut uniform);
                    let (da, dx) = (upload(&p.a), upload(&p.x));
                    let (dot, abs) = p.reference(op);
                    // Every kernel's longest chain of additions is at most sum/32 + 64 long.
                    let depth = ((if op == Op::N { n } else { m } + 31) / 32 + 64) as f64;
                    for k in kernels(op) {
                        let what = format!(
                            "seed {} {:?} {:?} {} x {} lda {} a {} b {}",
                            seed, op, k, m, n, p.lda, alpha, beta
                        );
                        let y = match run(gpu, &p, op, &da, &dx, k, alpha, beta) {
                            Ok(y) => y,
                            Err(Error::Unsupported { .. }) | Err(Error::Misaligned { .. })
                                if k != SgemvKernel::Auto =>
                            {
                                continue
                            }
                            Err(e) => panic!("{}: {}", what, e),
                        };
                        for (i, &g) in y.iter().enumerate() {
                            let beta_y = if beta == 0.0 { 0.0 } else { beta as f64 * p.y0[i] as f64 };
                            let want = alpha as f64 * dot[i] + beta_y;
                            let tol = 2.0 * depth * U32 * (alpha.abs() as f64 * abs[i] + beta_y.abs()) + 1e-30;
                            assert!(
                                (g as f64 - want).abs() <= tol,
                                "{}: y[{}] = {} want {} tol {}",
                                what,
                                i,
                                g,
                                want,
                                tol
                            );
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn split_kernels_are_deterministic() {
    let handle = match gpu("split_kernels_are_deterministic") {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let mut rng = Rng::fresh("sgemv_deterministic");
    for &(m, n, op) in [(64usize, 1usize << 20, Op::N), (1 << 20, 16, Op::T), (4096, 4096, Op::T)].iter() {
        let p = Problem::new(m, n, n, op, &mut rng, &mut uniform);
        let (da, dx) = (upload(&p.a), upload(&p.x));
        let first = run(gpu, &p, op, &da, &dx, SgemvKernel::Auto, 1.0, 0.0).unwrap();
        for _ in 0..3 {
            let again = run(gpu, &p, op, &da, &dx, SgemvKernel::Auto, 1.0, 0.0).unwrap();
            let same = first.iter().zip(&again).all(|(a, b)| a.to_bits() == b.to_bits());
            assert!(same, "seed {} {:?} {} x {}: results differ between runs", rng.seed, op, m, n);
        }
    }
}

#[test]
fn transposed_edges_and_bad_input() {
    let handle = match gpu("transposed_edges_and_bad_input") {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let t = |beta| SgemvOptions { beta, op: Op::T, ..Default::default() };
    // m = 0: y = beta * y over n outputs.
    let y0 = [1.0f32, -2.0, 3.5];
    let (empty, mut y) = (upload::<f32>(&[]), upload(&y0));
    gpu.sgemv(0, 3, &empty, &empty, &mut y, t(2.0)).unwrap();
    assert_eq!(download(gpu, &y), vec![2.0, -4.0, 7.0]);
    // n = 0: y is empty, nothing runs.
    let x = upload(&[1.0f32; 5]);
    gpu.sgemv(5, 0, &empty, &x, &mut upload::<f32>(&[]), t(0.0)).unwrap();
    let a = upload(&[1.0f32; 5 * 4]);
    let mut y4 = upload(&[0.0f32; 4]);
    assert!(matches!(
        gpu.sgemv(5, 4, &a, &x.index(1..), &mut y4, t(0.0)),
        Err(Error::LengthMismatch { what: "x", expected: 5, actual: 4 })
    ));
    assert!(matches!(
        gpu.sgemv(5, 4, &a, &x, &mut upload(&[0.0f32; 5]), t(0.0)),
        Err(Error::LengthMismatch { what: "y", expected: 4, actual: 5 })
    ));
    assert!(matches!(
        gpu.sgemv(5, 4, &a, &x, &mut y4, SgemvOptions { kernel: SgemvKernel::N128, ..t(0.0) }),
        Err(Error::Unsupported { .. })
    ));
    gpu.sgemv(5, 4, &a, &x, &mut y4, t(0.0)).unwrap();
    assert_eq!(download(gpu, &y4), vec![5.0; 4]);
}

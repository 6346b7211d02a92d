//! sgemv on the GPU against an f64 CPU reference: shapes × every applicable kernel, alpha and
//! beta, lda > n, offset (unaligned) views, and y poisoned before every run; BLAS's alpha = 0
//! and y sharing memory with A or x, compared exactly.
mod common;
use common::{download, gpu, upload, Rng, U32};
use cudakernels::cust::memory::DeviceSlice;
use cudakernels::{Error, GpuStream, Op, SgemvKernel, SgemvOptions};

const NS: [usize; 15] = [1, 4, 8, 15, 16, 17, 31, 32, 33, 64, 127, 128, 129, 1000, 4096];
const MS: [usize; 10] = [0, 1, 3, 7, 8, 9, 255, 16384, 16387, 1 << 20];
/// Largest A (elements) the shape sweep builds: m = 2^20 runs with n ≤ 128.
const MAX_ELEMS: usize = 1 << 27;

struct Case<'a> {
    m: usize,
    n: usize,
    lda: usize,
    a: &'a [f32],
    x: &'a [f32],
    y0: &'a [f32],
    alpha: f32,
    beta: f32,
}

/// Checks `got` against the f64 reference with a bound from the dot products' nesting depth.
fn check(case: &Case, got: &[f32], what: &str) {
    for (r, &g) in got.iter().enumerate().take(case.m) {
        let row = &case.a[r * case.lda..r * case.lda + case.n];
        let dot: f64 = row.iter().zip(case.x).map(|(&a, &x)| a as f64 * x as f64).sum();
        let abs: f64 = row.iter().zip(case.x).map(|(&a, &x)| (a as f64 * x as f64).abs()).sum();
        let beta_y = if case.beta == 0.0 { 0.0 } else { case.beta as f64 * case.y0[r] as f64 };
        let want = case.alpha as f64 * dot + beta_y;
        let depth = (case.n + 31) / 32 + 16;
        let tol = 2.0 * depth as f64 * U32 * (case.alpha.abs() as f64 * abs + beta_y.abs()) + 1e-30;
        assert!(
            (g as f64 - want).abs() <= tol,
            "{} m {} n {} lda {} row {}: got {} want {} tol {}",
            what,
            case.m,
            case.n,
            case.lda,
            r,
            g,
            want,
            tol
        );
    }
}

/// Runs one kernel on `case` with A and x at the given device views; poisons y first.
fn run(
    gpu: &GpuStream,
    case: &Case,
    a: &DeviceSlice<f32>,
    x: &DeviceSlice<f32>,
    kernel: SgemvKernel,
) -> Result<Vec<f32>, Error> {
    let poison = if case.beta == 0.0 { vec![f32::NAN; case.m] } else { case.y0.to_vec() };
    let mut y = upload(&poison);
    gpu.sgemv(
        case.m,
        case.n,
        a,
        x,
        &mut y,
        SgemvOptions { alpha: case.alpha, beta: case.beta, lda: Some(case.lda), kernel, ..Default::default() },
    )?;
    Ok(download(gpu, &y))
}

#[test]
fn shapes_with_every_kernel() {
    let handle = match gpu("shapes_with_every_kernel") {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let mut rng = Rng::fresh("sgemv_shapes");
    let mut runs = 0;
    for &n in NS.iter() {
        for &m in MS.iter() {
            if m * n > MAX_ELEMS {
                continue;
            }
            let a: Vec<f32> = (0..m * n).map(|_| rng.range(-1.0, 1.0) as f32).collect();
            let x: Vec<f32> = (0..n).map(|_| rng.range(-1.0, 1.0) as f32).collect();
            let (da, dx) = (upload(&a), upload(&x));
            let case = Case { m, n, lda: n, a: &a, x: &x, y0: &[], alpha: 1.0, beta: 0.0 };
            for k in std::iter::once(SgemvKernel::Auto).chain(SgemvKernel::explicit()) {
                let what = format!("seed {} {:?}", rng.seed, k);
                match run(gpu, &case, &da, &dx, k) {
                    Ok(y) => {
                        check(&case, &y, &what);
                        runs += 1;
                    }
                    Err(Error::Unsupported { .. }) if k != SgemvKernel::Auto && m > 0 => {}
                    Err(e) => panic!("{} m {} n {}: {}", what, m, n, e),
                }
            }
        }
    }
    assert!(runs > NS.len() * MS.len());
}

#[test]
fn alpha_beta_lda_and_offset_views() {
    let handle = match gpu("alpha_beta_lda_and_offset_views") {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let mut rng = Rng::fresh("sgemv_views");
    for &(m, n) in [
        (7usize, 16usize),
        (255, 32),
        (16387, 128),
        (9, 129),
        (300, 1000),
        (8, 4096),
        (37, 9001),
        (37, 9004),
        (16384, 4),
        (33, 8),
    ]
    .iter()
    {
        for &(lda_pad, a_off, x_off) in
            [(0usize, 0usize, 0usize), (4, 0, 0), (3, 0, 0), (0, 1, 0), (0, 0, 1), (5, 3, 2)].iter()
        {
            for &(alpha, beta) in [(1.0f32, 0.0f32), (1.5, -0.75), (-2.0, 1.0), (0.0, 0.5)].iter() {
                let lda = n + lda_pad;
                let a: Vec<f32> = (0..a_off + m * lda).map(|_| rng.range(-1.0, 1.0) as f32).collect();
                let x: Vec<f32> = (0..x_off + n).map(|_| rng.range(-1.0, 1.0) as f32).collect();
                let y0: Vec<f32> = (0..m).map(|_| rng.range(-1.0, 1.0) as f32).collect();
                let (da, dx) = (upload(&a), upload(&x));
                let (va, vx) = (da.index(a_off..), dx.index(x_off..));
                let case = Case { m, n, lda, a: &a[a_off..], x: &x[x_off..], y0: &y0, alpha, beta };
                let aligned = a_off == 0 && x_off == 0 && lda % 4 == 0;
                for k in std::iter::once(SgemvKernel::Auto).chain(SgemvKernel::explicit()) {
                    let what = format!(
                        "seed {} {:?} alpha {} beta {} offsets ({}, {})",
                        rng.seed, k, alpha, beta, a_off, x_off
                    );
                    match run(gpu, &case, &va, &vx, k) {
                        Ok(y) => check(&case, &y, &what),
                        Err(Error::Misaligned { .. }) => assert!(!aligned && k.vector_loads(), "{}", what),
                        Err(Error::Unsupported { .. }) => assert!(k != SgemvKernel::Auto, "{}", what),
                        Err(e) => panic!("{}: {}", what, e),
                    }
                }
            }
        }
    }
}

#[test]
fn empty_shapes_and_bad_input() {
    let handle = match gpu("empty_shapes_and_bad_input") {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let mut rng = Rng::fresh("sgemv_edges");
    // n = 0: y = beta * y.
    let y0: Vec<f32> = (0..37).map(|_| rng.range(-1.0, 1.0) as f32).collect();
    let mut y = upload(&y0);
    let empty = upload::<f32>(&[]);
    gpu.sgemv(37, 0, &empty, &empty, &mut y, SgemvOptions { beta: 2.0, ..Default::default() }).unwrap();
    let got = download(gpu, &y);
    for (g, w) in got.iter().zip(&y0) {
        assert_eq!(*g, 2.0 * w, "seed {}", rng.seed);
    }
    // m = 0 does nothing.
    let mut y_empty = upload::<f32>(&[]);
    let x = upload(&[1.0f32; 16]);
    gpu.sgemv(0, 16, &empty, &x, &mut y_empty, SgemvOptions::default()).unwrap();
    // Shape errors are reported, not launched.
    let a = upload(&vec![1.0f32; 10 * 16]);
    let mut y = upload(&[0.0f32; 10]);
    assert!(matches!(
        gpu.sgemv(10, 16, &a, &x.index(1..), &mut y, SgemvOptions::default()),
        Err(Error::LengthMismatch { what: "x", .. })
    ));
    assert!(matches!(gpu.sgemv(11, 16, &a, &x, &mut y, SgemvOptions::default()), Err(Error::LengthMismatch { .. })));
    assert!(matches!(
        gpu.sgemv(10, 16, &a, &x, &mut y, SgemvOptions { lda: Some(15), ..Default::default() }),
        Err(Error::LeadingDimension { lda: 15, n: 16 })
    ));
    assert!(matches!(
        gpu.sgemv(
            10,
            16,
            &a.index(1..),
            &x,
            &mut y,
            SgemvOptions { kernel: SgemvKernel::WarpVec4, ..Default::default() }
        ),
        Err(Error::LengthMismatch { what: "A", .. })
    ));
}

/// NaN, +Inf and -Inf in turn: any product that read them would leave a NaN or Inf in y.
fn non_finite(len: usize) -> Vec<f32> {
    (0..len).map(|i| [f32::NAN, f32::INFINITY, f32::NEG_INFINITY][i % 3]).collect()
}

/// y after alpha = 0 from `y0` with `beta`, exactly: +0 for beta = 0 (y unread), y0 to the bit
/// for beta = 1 (BLAS's quick return), beta·y0 otherwise (NaN for NaN).
fn assert_beta_y(got: &[f32], y0: &[f32], beta: f32, what: &str) {
    for (i, (&g, &y)) in got.iter().zip(y0).enumerate() {
        let exact = if beta == 0.0 {
            g.to_bits() == 0
        } else if beta == 1.0 {
            g.to_bits() == y.to_bits()
        } else {
            g == beta * y || (g.is_nan() && (beta * y).is_nan())
        };
        assert!(exact, "{} y[{}]: got {} from {} with beta {}", what, i, g, y, beta);
    }
}

/// Runs `kernel` with alpha = 0 on A and x of `non_finite` values; None where a named kernel
/// refuses the shape (as it does with any alpha).
fn alpha_zero_run(
    gpu: &GpuStream,
    (m, n, lda, op): (usize, usize, usize, Op),
    (a, x): (&DeviceSlice<f32>, &DeviceSlice<f32>),
    y0: &[f32],
    beta: f32,
    kernel: SgemvKernel,
) -> Option<Vec<f32>> {
    let mut y = upload(y0);
    let opts = SgemvOptions { alpha: 0.0, beta, lda: Some(lda), kernel, op, ..SgemvOptions::default() };
    match gpu.sgemv(m, n, a, x, &mut y, opts) {
        Ok(()) => Some(download(gpu, &y)),
        Err(Error::Unsupported { .. }) | Err(Error::Misaligned { .. }) if kernel != SgemvKernel::Auto => None,
        Err(e) => panic!("{:?} {:?} {} x {} lda {}: {}", kernel, op, m, n, lda, e),
    }
}

#[test]
fn alpha_zero_reads_neither_a_nor_x() {
    let handle = match gpu("alpha_zero_reads_neither_a_nor_x") {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let mut rng = Rng::fresh("sgemv_alpha_zero");
    let mut ran = std::collections::HashSet::new();
    // Shapes that Auto serves with each kernel family, both ops.
    let shapes = [(37usize, 16usize), (100, 4), (1000, 3), (64, 128), (9, 4096), (5, 600), (17, 1 << 16), (3, 1 << 19)];
    for &op in [Op::N, Op::T].iter() {
        for &(m, n) in shapes.iter() {
            for &lda in [n, n + 1].iter() {
                let (x_len, y_len) = if op == Op::N { (n, m) } else { (m, n) };
                let (a, x) = (upload(&non_finite((m - 1) * lda + n)), upload(&non_finite(x_len)));
                for &beta in [0.0f32, 1.0, 2.5].iter() {
                    // Poison where beta = 0; values, a NaN and an Inf otherwise.
                    let mut y0: Vec<f32> = (0..y_len).map(|_| rng.range(-1.0, 1.0) as f32).collect();
                    y0[0] = f32::NAN;
                    y0[y_len - 1] = f32::INFINITY;
                    if beta == 0.0 {
                        y0 = vec![f32::NAN; y_len];
                    }
                    for k in std::iter::once(SgemvKernel::Auto).chain(SgemvKernel::explicit()) {
                        let what = format!("seed {} {:?} {:?} {} x {} lda {}", rng.seed, k, op, m, n, lda);
                        if let Some(got) = alpha_zero_run(gpu, (m, n, lda, op), (&a, &x), &y0, beta, k) {
                            assert_beta_y(&got, &y0, beta, &what);
                            ran.insert(k);
                        }
                    }
                }
            }
        }
    }
    // Every named kernel takes one of these shapes.
    for k in SgemvKernel::explicit() {
        assert!(ran.contains(&k), "{:?} never ran with alpha = 0", k);
    }
}

#[test]
fn an_empty_sum_is_beta_y_whatever_alpha() {
    let handle = match gpu("an_empty_sum_is_beta_y_whatever_alpha") {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let mut rng = Rng::fresh("sgemv_empty_sum");
    let y0: Vec<f32> = (0..37).map(|_| rng.range(-1.0, 1.0) as f32).collect();
    let empty = upload::<f32>(&[]);
    // n = 0 (Op::N) and m = 0 (Op::T): alpha times an empty sum adds nothing, not Inf · 0.
    for &(op, m, n, kernel) in [(Op::N, 37, 0, SgemvKernel::StagedRows), (Op::T, 0, 37, SgemvKernel::TScalar)].iter() {
        for &alpha in [f32::INFINITY, f32::NAN, 1.0].iter() {
            for &k in [SgemvKernel::Auto, kernel].iter() {
                let mut y = upload(&y0);
                gpu.sgemv(
                    m,
                    n,
                    &empty,
                    &empty,
                    &mut y,
                    SgemvOptions { alpha, beta: 2.5, kernel: k, op, ..SgemvOptions::default() },
                )
                .unwrap();
                assert_beta_y(
                    &download(gpu, &y),
                    &y0,
                    2.5,
                    &format!("seed {} {:?} {:?} alpha {}", rng.seed, op, k, alpha),
                );
            }
        }
    }
}

#[test]
fn y_sharing_memory_with_a_or_x_is_refused() {
    let handle = match gpu("y_sharing_memory_with_a_or_x_is_refused") {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let (m, n) = (40usize, 24usize);
    // A then m more floats in one buffer, x then n more in another. Small integers: every sum
    // is exact in f32.
    let a_tail: Vec<f32> = (0..m * n + m).map(|i| (i % 7) as f32 - 3.0).collect();
    let x_tail: Vec<f32> = (0..m + n).map(|i| (i % 5) as f32 - 2.0).collect();
    let (a_buf, x_buf) = (upload(&a_tail), upload(&x_tail));
    let a = a_buf.index(..m * n);
    // A `DeviceSlice` is `Copy`: safe code makes a `&mut` view into A's or x's buffer.
    let cases = [
        (Op::N, a_buf.index(100..100 + m), "A"),
        (Op::T, a_buf.index(m * n - 1..m * n - 1 + n), "A"),
        (Op::T, x_buf.index(m - 1..m - 1 + n), "x"),
        (Op::N, x_buf.index(n - 1..n - 1 + m), "x"),
    ];
    for &(op, y, with) in cases.iter() {
        let (x, mut y) = (if op == Op::N { x_buf.index(..n) } else { x_buf.index(..m) }, y);
        let got = gpu.sgemv(m, n, &a, &x, &mut y, SgemvOptions { op, ..SgemvOptions::default() });
        assert_eq!(got, Err(Error::Overlap { what: "y", with }), "{:?}", op);
        let unchanged = download(gpu, &a_buf) == a_tail && download(gpu, &x_buf) == x_tail;
        assert!(unchanged, "{:?} y on {}: nothing was launched", op, with);
    }
    // y right after A, or right after x, shares no byte with them: the product lands there.
    let (x, mut y) = (x_buf.index(..n), a_buf.index(m * n..));
    gpu.sgemv(m, n, &a, &x, &mut y, SgemvOptions::default()).unwrap();
    let want: Vec<f32> = (0..m).map(|r| (0..n).map(|c| a_tail[r * n + c] * x_tail[c]).sum()).collect();
    assert_eq!(download(gpu, &y), want);
    let (x, mut y) = (x_buf.index(..m), x_buf.index(m..));
    gpu.sgemv(m, n, &a, &x, &mut y, SgemvOptions { op: Op::T, ..SgemvOptions::default() }).unwrap();
    let want: Vec<f32> = (0..n).map(|c| (0..m).map(|r| a_tail[r * n + c] * x_tail[r]).sum()).collect();
    assert_eq!(download(gpu, &y), want);
    assert_eq!(download(gpu, &a_buf)[..m * n], a_tail[..m * n]);
    assert_eq!(download(gpu, &x_buf)[..m], x_tail[..m]);
}

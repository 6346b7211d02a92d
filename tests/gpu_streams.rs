//! One shared handle across threads and streams: concurrent value calls, overlap with a long
//! sgemv, typed errors on a shared handle, drop semantics and no allocation per call.
mod common;
use common::{download, gpu, upload_on, Rng, U32};
use cudakernels::cust::event::{Event, EventFlags, EventStatus};
use cudakernels::cust::memory::DeviceBuffer;
use cudakernels::{Error, Finish, GpuStream, LadderKernel, ReduceStrategy, SgemvKernel, SgemvOptions, TypedOp};
use std::sync::Arc;

const THREADS: usize = 8;
const ROUNDS: usize = 3;

/// Held by each test of this file for its whole run, so that they run one at a time. Their
/// synchronous copies (`download`, cust's `copy_to`) go through the legacy default stream, which
/// waits for the work queued before it on every blocking stream and holds back the work queued
/// after it (the CUDA programming guide's implicit synchronization): one in another thread during
/// the overlap test's window orders its reduction after the long sgemv.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static INIT: std::sync::Once = std::sync::Once::new();
    static mut LOCK: Option<std::sync::Mutex<()>> = None;
    // SAFETY: LOCK is written once, inside `call_once`, which every reader passes first.
    unsafe {
        INIT.call_once(|| LOCK = Some(std::sync::Mutex::new(())));
        // A test that failed holding it poisons it; the others still run.
        (*std::ptr::addr_of!(LOCK)).as_ref().expect("set by call_once").lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[test]
fn threads_share_one_handle_each_on_its_own_stream() {
    let _one = one_at_a_time();
    let gpu = match gpu("threads_share_one_handle_each_on_its_own_stream") {
        Some(g) => Arc::new(g),
        None => return,
    };
    let seed = Rng::fresh("threads_streams").seed;
    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            let gpu = gpu.clone();
            std::thread::spawn(move || {
                let s = gpu.new_stream().expect("a stream");
                let mut rng = Rng::with_seed(seed ^ (t as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
                let mut checks = 0;
                for _ in 0..ROUNDS {
                    let n = 1 + rng.below(1 << 26);
                    let host: Vec<i32> = (0..n).map(|_| rng.next_u64() as i32).collect();
                    let bytes: Vec<u8> = host.iter().map(|&v| (v >> 8) as u8).collect();
                    let (d, db) = (upload_on(&s, &host), upload_on(&s, &bytes));
                    let what = format!("seed {} thread {} n {}", seed, t, n);
                    let wrapped = host.iter().fold(0i32, |a, &b| a.wrapping_add(b));
                    let wide: i64 = host.iter().map(|&v| v as i64).sum();
                    let byte_sum: u64 = bytes.iter().map(|&v| v as u64).sum();
                    let lo_hi = (*host.iter().min().unwrap(), *host.iter().max().unwrap());
                    assert_eq!(s.reduce_sum(&d, ReduceStrategy::Auto).unwrap(), wrapped, "{}", what);
                    assert_eq!(s.sum(&d).unwrap(), wide, "{}", what);
                    assert_eq!(s.sum(&db).unwrap(), byte_sum, "{}", what);
                    assert_eq!(s.minmax(&d).unwrap(), lo_hi, "{}", what);
                    let mut out = upload_on(&s, &[0x5a5a_5a5a_5a5a_5a5ai64]);
                    s.sum_into(&d, &mut out).unwrap();
                    assert_eq!(download(&s, &out)[0], wide, "{} (sum_into)", what);
                    checks += 5;
                }
                checks
            })
        })
        .collect();
    let total: usize = workers.into_iter().map(|w| w.join().expect("a worker panicked")).sum();
    assert_eq!(total, THREADS * ROUNDS * 5);
}

/// y = A·x rows `rows` of a row-major m × n A against the f64 reference.
fn check_rows(a: &[f32], x: &[f32], n: usize, y: &[f32], rows: impl Iterator<Item = usize>, what: &str) {
    for r in rows {
        let row = &a[r * n..(r + 1) * n];
        let dot: f64 = row.iter().zip(x).map(|(&a, &x)| a as f64 * x as f64).sum();
        let abs: f64 = row.iter().zip(x).map(|(&a, &x)| (a as f64 * x as f64).abs()).sum();
        // A warp's lanes each sum n / 32 products, then a 5-step shuffle tree.
        let tol = 2.0 * ((n + 31) / 32 + 16) as f64 * U32 * abs + 1e-30;
        assert!((y[r] as f64 - dot).abs() <= tol, "{} row {}: got {} want {} tol {}", what, r, y[r], dot, tol);
    }
}

#[test]
fn a_reduction_overlaps_a_long_sgemv_on_another_stream() {
    let _one = one_at_a_time();
    let gpu = match gpu("a_reduction_overlaps_a_long_sgemv_on_another_stream") {
        Some(g) => g,
        None => return,
    };
    let mut rng = Rng::fresh("overlap");
    let (long, short) = (gpu.new_stream().unwrap(), gpu.new_stream().unwrap());
    let (m, n, repeats) = (1usize << 16, 4096usize, 40);
    let a: Vec<f32> = (0..m * n).map(|i| ((i % 13) as f32 - 6.0) * 0.125).collect();
    let x: Vec<f32> = (0..n).map(|_| rng.range(-1.0, 1.0) as f32).collect();
    let (da, dx) = (upload_on(&long, &a), upload_on(&long, &x));
    let mut dy = upload_on(&long, &vec![f32::NAN; m]);
    let input: Vec<i32> = (0..1 << 20).map(|_| rng.next_u64() as i32 >> 4).collect();
    let dinput = upload_on(&short, &input);
    let done = Event::new(EventFlags::DEFAULT).unwrap();
    for _ in 0..repeats {
        long.sgemv(m, n, &da, &dx, &mut dy, SgemvOptions::default()).unwrap();
    }
    done.record(long.stream().unwrap()).unwrap();
    let started = std::time::Instant::now();
    let sum = short.reduce_sum(&dinput, ReduceStrategy::Auto).unwrap();
    let short_us = started.elapsed().as_secs_f64() * 1e6;
    // The library adds no wait between streams. That the reduction then finishes first also
    // needs the device to run the two streams' kernels together, which CUDA allows and the
    // H100 and H200 do; no other thread's legacy-stream work comes between ([`one_at_a_time`]).
    let long_busy = done.query().unwrap() == EventStatus::NotReady;
    assert_eq!(sum, input.iter().fold(0i32, |s, &v| s.wrapping_add(v)), "seed {}", rng.seed);
    assert!(long_busy, "the sgemv stream finished before the reduction returned ({:.0} µs): no overlap", short_us);
    let y = download(&long, &dy);
    let what = format!("seed {} overlap sgemv", rng.seed);
    check_rows(&a, &x, n, &y, (0..64).chain(m - 64..m).chain((0..64).map(|_| rng.below(m))), &what);
}

#[test]
fn bad_input_on_a_shared_handle_gets_typed_errors_and_the_handle_keeps_working() {
    let _one = one_at_a_time();
    let gpu = match gpu("bad_input_on_a_shared_handle_gets_typed_errors_and_the_handle_keeps_working") {
        Some(g) => Arc::new(g),
        None => return,
    };
    let workers: Vec<_> = (0..4)
        .map(|t| {
            let gpu = gpu.clone();
            std::thread::spawn(move || {
                let own = gpu.new_stream().unwrap();
                // Even threads use the handle's default stream, odd ones their own.
                let s: &GpuStream = if t % 2 == 0 { gpu.default_stream() } else { &own };
                let host: Vec<f32> = (0..1000).map(|i| (i % 17) as f32 - 8.0).collect();
                let x = upload_on(s, &host);
                let empty = upload_on(s, &[0.0f32; 0]);
                let (a, x8) = (upload_on(s, &[1.0f32; 64]), upload_on(s, &[1.0f32; 8]));
                let mut y = upload_on(s, &[0.0f32; 4]);
                let mut no_out = upload_on(s, &[0.0f32; 0]);
                for _ in 0..5 {
                    assert_eq!(s.minmax(&empty), Err(Error::Empty { op: "minmax" }));
                    assert_eq!(s.min(&empty), Err(Error::Empty { op: "min" }));
                    assert_eq!(
                        s.reduce_sum_into(&x, &mut no_out, ReduceStrategy::Auto),
                        Err(Error::LengthMismatch { what: "out", expected: 1, actual: 0 })
                    );
                    let bad = ReduceStrategy::Ladder {
                        kernel: LadderKernel::Sequential,
                        finish: Finish::Flagged,
                        block: 100,
                        grain: 1,
                    };
                    assert!(matches!(s.reduce_sum(&x, bad), Err(Error::Unsupported { .. })));
                    assert!(matches!(s.reduce_into(TypedOp::Sum, &x, &mut y), Err(Error::Unsupported { .. })));
                    let opts = SgemvOptions { lda: Some(7), ..SgemvOptions::default() };
                    assert_eq!(s.sgemv(4, 8, &a, &x8, &mut y, opts), Err(Error::LeadingDimension { lda: 7, n: 8 }));
                    let opts = SgemvOptions { kernel: SgemvKernel::WarpVec4, ..SgemvOptions::default() };
                    let shifted = a.index(1..);
                    assert!(matches!(
                        s.sgemv(4, 8, &shifted, &x8, &mut y, opts),
                        Err(Error::Misaligned { what: "A", .. })
                    ));
                    assert_eq!(
                        s.sgemv(5, 8, &a, &x8, &mut y, SgemvOptions::default()),
                        Err(Error::LengthMismatch { what: "y", expected: 5, actual: 4 })
                    );
                    // The handle still works, on this stream and on the others.
                    let want: f64 = host.iter().map(|&v| v as f64).sum();
                    assert_eq!(s.reduce_sum(&x, ReduceStrategy::Auto).unwrap() as f64, want);
                    assert_eq!(s.minmax(&x).unwrap(), (-8.0, 8.0));
                    s.sgemv(4, 8, &a, &x8, &mut y, SgemvOptions::default()).unwrap();
                    assert_eq!(download(s, &y), vec![8.0f32; 4]);
                }
            })
        })
        .collect();
    for w in workers {
        w.join().expect("a worker panicked");
    }
}

#[test]
fn dropping_a_stream_or_buffers_with_work_queued_is_safe() {
    let _one = one_at_a_time();
    let gpu = match gpu("dropping_a_stream_or_buffers_with_work_queued_is_safe") {
        Some(g) => g,
        None => return,
    };
    let mut rng = Rng::fresh("drops");
    let (m, n) = (1usize << 15, 2048usize);
    let a: Vec<f32> = (0..m * n).map(|_| rng.range(-1.0, 1.0) as f32).collect();
    let x: Vec<f32> = (0..n).map(|_| rng.range(-1.0, 1.0) as f32).collect();
    let what = format!("seed {}", rng.seed);
    let rows = || (0..32).chain(m - 32..m);
    // Inputs dropped while the kernels that read them are queued: the free waits for them.
    let s = gpu.new_stream().unwrap();
    let mut dy = upload_on(&s, &vec![f32::NAN; m]);
    {
        let (da, dx) = (upload_on(&s, &a), upload_on(&s, &x));
        for _ in 0..8 {
            s.sgemv(m, n, &da, &dx, &mut dy, SgemvOptions::default()).unwrap();
        }
    }
    check_rows(&a, &x, n, &download(&s, &dy), rows(), &format!("{} inputs dropped", what));
    // A stream dropped with work queued waits for it before its scratch goes.
    let (da, dx) = (upload_on(&s, &a), upload_on(&s, &x));
    let mut dy2 = upload_on(&s, &vec![f32::NAN; m]);
    let mut sums = upload_on(&s, &[f32::NAN; 1]);
    {
        let doomed = gpu.new_stream().unwrap();
        for _ in 0..8 {
            doomed.sgemv(m, n, &da, &dx, &mut dy2, SgemvOptions::default()).unwrap();
        }
        doomed.reduce_sum_into(&da, &mut sums, ReduceStrategy::Auto).unwrap();
    }
    check_rows(&a, &x, n, &download(&s, &dy2), rows(), &format!("{} stream dropped", what));
    let want: f64 = a.iter().map(|&v| v as f64).sum();
    let abs: f64 = a.iter().map(|&v| v.abs() as f64).sum();
    let got = download(&s, &sums)[0] as f64;
    // Auto's grid holds at least sm_count · 256 threads: each sums at most n / that many
    // elements in order, then the block tree (depth ≤ 10) and the fold of the block values
    // (≤ 64 per thread, then a tree) add at most 64 more steps.
    let tol = ((m * n) as f64 / (gpu.sm_count() as f64 * 256.0) + 64.0) * U32 * abs;
    assert!((got - want).abs() <= tol, "{} sum after drop: got {} want {} tol {}", what, got, want, tol);
}

#[test]
fn value_calls_allocate_nothing_once_the_scratch_has_grown() {
    let _one = one_at_a_time();
    let gpu = match gpu("value_calls_allocate_nothing_once_the_scratch_has_grown") {
        Some(g) => g,
        None => return,
    };
    let s = gpu.new_stream().unwrap();
    let mut rng = Rng::fresh("no_alloc");
    let inputs: Vec<Vec<i32>> =
        [1usize << 20, 4096, 1, 777].iter().map(|&n| (0..n).map(|_| rng.next_u64() as i32 >> 8).collect()).collect();
    let dev: Vec<DeviceBuffer<i32>> = inputs.iter().map(|h| upload_on(&s, h)).collect();
    let last_block =
        ReduceStrategy::Ladder { kernel: LadderKernel::Vectorized, finish: Finish::LastBlock, block: 256, grain: 1 };
    let calls = |round: usize| {
        for (h, d) in inputs.iter().zip(&dev) {
            let what = format!("seed {} round {} n {}", rng.seed, round, h.len());
            assert_eq!(
                s.reduce_sum(d, ReduceStrategy::Auto).unwrap(),
                h.iter().fold(0i32, |a, &b| a.wrapping_add(b)),
                "{}",
                what
            );
            assert_eq!(
                s.reduce_sum(d, last_block).unwrap(),
                h.iter().fold(0i32, |a, &b| a.wrapping_add(b)),
                "{}",
                what
            );
            assert_eq!(s.sum(d).unwrap(), h.iter().map(|&v| v as i64).sum::<i64>(), "{}", what);
            assert_eq!(s.min(d).unwrap(), *h.iter().min().unwrap(), "{}", what);
            assert_eq!(s.max(d).unwrap(), *h.iter().max().unwrap(), "{}", what);
            assert_eq!(s.minmax(d).unwrap(), (*h.iter().min().unwrap(), *h.iter().max().unwrap()), "{}", what);
        }
    };
    calls(0);
    let grown = s.scratch_allocations();
    for round in 1..50 {
        calls(round);
    }
    assert_eq!(s.scratch_allocations(), grown, "value calls allocated after the scratch had grown");
}

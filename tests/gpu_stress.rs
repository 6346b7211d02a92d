//! The stress run: 64 streams of one shared handle, driven from 12 threads at once, each stream
//! taken by several threads in turn, queuing `Flagged` sums into device memory and value calls
//! on fresh random inputs of mixed sizes, lengths and offsets, every result checked exactly
//! against the CPU. Sized to finish in seconds (and within the sanitizers' budget).
mod common;
use common::{download, gpu, upload_on, Rng, U32};
use cudakernels::{GpuStream, ReduceStrategy};
use std::sync::Arc;

const STREAMS: usize = 64;
const THREADS: usize = 12;
/// Rounds per thread: thread t takes stream (t + 12·round) mod 64, so 16 rounds reach every
/// stream (12·round mod 64 runs over the multiples of 4, t over the remainders), each from
/// three threads, sometimes at once.
const ROUNDS: usize = 16;

/// A length: a third up to 5000, a third up to 300 000, a third up to 3 million.
fn length(rng: &mut Rng) -> usize {
    let top = [5_000, 300_000, 3_000_000][rng.below(3)];
    1 + rng.below(top)
}

/// How far an f32 sum of `n` values on the fast path may be from the exact sum, in units of
/// their absolute sum: the depth of its summation tree times f32's unit roundoff. A thread adds
/// at most 4 vectors of 4 (grain 4) while the grid is below the resident blocks, and else at
/// most n / (threads resident) + 4 ≤ n / (SMs · 256) + 4; plus a head and a tail element; two
/// block trees of 10 levels (warp, then warps); the fold of at most 8 block values per thread.
fn f32_sum_tolerance(n: usize, sm_count: u32) -> f64 {
    let per_thread = n / (sm_count as usize * 256) + 16 + 4 + 2;
    (per_thread + 20 + 8) as f64 * U32
}

/// One round on stream `s`: sums into device memory and value calls, all checked.
fn round(s: &GpuStream, rng: &mut Rng, what: &str) {
    let (n, offset) = (length(rng), rng.below(4));
    let ints: Vec<i32> = (0..n + offset).map(|_| rng.next_u64() as i32).collect();
    let floats: Vec<f32> = (0..n + offset).map(|_| rng.range(-1.0, 1.0) as f32).collect();
    let bytes: Vec<u8> = ints.iter().map(|&v| (v >> 11) as u8).collect();
    let (di, df, db) = (upload_on(s, &ints), upload_on(s, &floats), upload_on(s, &bytes));
    let (di, df, db) = (di.index(offset..), df.index(offset..), db.index(offset..));
    let (ints, floats, bytes) = (&ints[offset..], &floats[offset..], &bytes[offset..]);
    let what = format!("{} n {} offset {}", what, n, offset);
    let wrapped = ints.iter().fold(0i32, |a, &b| a.wrapping_add(b));
    let exact: f64 = floats.iter().map(|&v| v as f64).sum();
    let tol = f32_sum_tolerance(n, s.sm_count()) * floats.iter().map(|&v| v.abs() as f64).sum::<f64>();
    let f32_close = |got: f32| (got as f64 - exact).abs() <= tol;
    // Queued first, read after the value calls and the stream's synchronize.
    let (mut into_i, mut into_f) = (upload_on(s, &[0x5a5a_5a5ai32]), upload_on(s, &[f32::NAN]));
    s.reduce_sum_into(&di, &mut into_i, ReduceStrategy::Auto).unwrap();
    s.reduce_sum_into(&df, &mut into_f, ReduceStrategy::Auto).unwrap();
    assert_eq!(s.reduce_sum(&di, ReduceStrategy::Auto).unwrap(), wrapped, "{} reduce_sum i32", what);
    let got = s.reduce_sum(&df, ReduceStrategy::Auto).unwrap();
    assert!(f32_close(got), "{} reduce_sum f32: {} against {} (tol {})", what, got, exact, tol);
    assert_eq!(s.sum(&di).unwrap(), ints.iter().map(|&v| v as i64).sum::<i64>(), "{} sum i32", what);
    assert_eq!(s.sum(&db).unwrap(), bytes.iter().map(|&v| v as u64).sum::<u64>(), "{} sum u8", what);
    let lo_hi = (*ints.iter().min().unwrap(), *ints.iter().max().unwrap());
    assert_eq!(s.minmax(&di).unwrap(), lo_hi, "{} minmax i32", what);
    let lo = floats.iter().copied().fold(f32::INFINITY, f32::min);
    let hi = floats.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    assert_eq!(s.minmax(&df).unwrap(), (lo, hi), "{} minmax f32", what);
    assert_eq!(download(s, &into_i)[0], wrapped, "{} reduce_sum_into i32", what);
    let got = download(s, &into_f)[0];
    assert!(f32_close(got), "{} reduce_sum_into f32: {} against {} (tol {})", what, got, exact, tol);
}

#[test]
fn stress_64_streams_of_one_handle() {
    let gpu = match gpu("stress_64_streams_of_one_handle") {
        Some(g) => Arc::new(g),
        None => return,
    };
    let started = std::time::Instant::now();
    let streams: Arc<Vec<GpuStream>> = Arc::new((0..STREAMS).map(|_| gpu.new_stream().unwrap()).collect());
    let seed = Rng::fresh("stress").seed;
    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            let streams = streams.clone();
            let gpu = gpu.clone();
            std::thread::spawn(move || {
                // A fresh thread: the test's own uploads (cust) need the device's context
                // current, which `bind` leaves so (entry points give the caller's back).
                gpu.bind().expect("bind the device's context");
                let mut rng = Rng::with_seed(seed ^ (t as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
                for r in 0..ROUNDS {
                    let k = (t + THREADS * r) % STREAMS;
                    round(&streams[k], &mut rng, &format!("seed {} thread {} round {} stream {}", seed, t, r, k));
                }
                ROUNDS
            })
        })
        .collect();
    let rounds: usize = workers.into_iter().map(|w| w.join().expect("a worker panicked")).sum();
    assert_eq!(rounds, THREADS * ROUNDS);
    eprintln!("stress: {} rounds on {} streams in {:.2?}", rounds, STREAMS, started.elapsed());
}

//! The reduction ladder on the GPU: every step × finish × block size × length × offset,
//! against an f64 CPU reference on fresh random inputs.
mod common;
use common::{download, gpu, log2_ceil, upload, Rng, U32};
use cudakernels::LADDER_BLOCKS;
use cudakernels::{Finish, GpuStream, LadderKernel, ReduceStrategy, SumElement};
use std::io::Write;

const LENGTHS: [usize; 13] = [0, 1, 31, 32, 33, 255, 256, 257, 1023, 1024, 1025, (1 << 20) + 3, 1 << 26];
const FINISHES: [Finish; 5] = [Finish::Atomic, Finish::SecondPass, Finish::Host, Finish::LastBlock, Finish::Flagged];

fn grains(kernel: LadderKernel) -> &'static [u32] {
    match kernel {
        LadderKernel::GlobalStride | LadderKernel::LocalStride | LadderKernel::WarpShuffle => &[1, 8],
        LadderKernel::Vectorized => &[1, 4],
        _ => &[1],
    }
}

/// Offsets tried at a length: all of 0..=3 for most, 0 and 3 for the largest.
fn offsets(len: usize) -> &'static [usize] {
    if len >= 1 << 26 {
        &[0, 3]
    } else {
        &[0, 1, 2, 3]
    }
}

/// Runs every strategy over `host[offset..offset + len]` (uploaded once);
/// `check(got, want, len, offset, strategy, grid)` judges each result against
/// `want = reference(slice)`, computed once per length and offset.
fn for_every_strategy<T: SumElement, R: Copy>(
    gpu: &GpuStream,
    host: &[T],
    reference: impl Fn(&[T]) -> R,
    mut check: impl FnMut(T, R, usize, usize, ReduceStrategy, usize),
) {
    let input = upload(host);
    for &len in LENGTHS.iter() {
        for &offset in offsets(len) {
            let started = std::time::Instant::now();
            let view = input.index(offset..offset + len);
            let want = reference(&host[offset..offset + len]);
            for kernel in LadderKernel::ALL.iter() {
                for finish in FINISHES.iter() {
                    for &block in LADDER_BLOCKS.iter() {
                        for &grain in grains(*kernel) {
                            let s = ReduceStrategy::Ladder { kernel: *kernel, finish: *finish, block, grain };
                            let got = gpu
                                .reduce_sum(&view, s)
                                .unwrap_or_else(|e| panic!("{:?} len {} failed: {}", s, len, e));
                            let grid = cudakernels::ladder_grid(
                                *kernel,
                                len,
                                block,
                                grain,
                                gpu.sm_count(),
                                gpu.max_threads_per_sm(),
                            );
                            check(got, want, len, offset, s, grid);
                        }
                    }
                }
            }
            let got = gpu.reduce_sum(&view, ReduceStrategy::Auto).unwrap();
            check(got, want, len, offset, ReduceStrategy::Auto, 0);
            let _ = writeln!(
                std::io::stderr(),
                "  {} len {} offset {}: every strategy in {:.2?}",
                T::NAME,
                len,
                offset,
                started.elapsed()
            );
        }
    }
}

#[test]
fn ladder_i32_exact() {
    let handle = match gpu("ladder_i32_exact") {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let mut rng = Rng::fresh("ladder_i32");
    let host: Vec<i32> = (0..(1 << 26) + 3).map(|_| rng.next_u64() as i32).collect();
    let mut runs = 0;
    for_every_strategy(gpu, &host, i32::host_sum, |got, want, len, offset, s, _| {
        assert_eq!(got, want, "seed {} {:?} len {} offset {}", rng.seed, s, len, offset);
        runs += 1;
    });
    assert!(runs > LadderKernel::ALL.len() * FINISHES.len() * LADDER_BLOCKS.len() * LENGTHS.len());
}

#[test]
fn ladder_f32_integer_valued_exact() {
    // Small integers in f32 sum exactly in any order (partial sums stay far below 2^24),
    // so a missing or doubled element shows as an exact mismatch.
    let handle = match gpu("ladder_f32_integer_valued_exact") {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let mut rng = Rng::fresh("ladder_f32_int");
    let host: Vec<f32> = (0..(1 << 26) + 3).map(|_| (rng.below(17) as f32) - 8.0).collect();
    for_every_strategy(gpu, &host, f64_sum, |got, want, len, offset, s, _| {
        assert_eq!(got as f64, want, "seed {} {:?} len {} offset {}", rng.seed, s, len, offset);
    });
}

/// The f64 reference sum of f32 elements.
fn f64_sum(v: &[f32]) -> f64 {
    v.iter().map(|&x| x as f64).sum()
}

/// Rounding error bound for a sum whose additions nest at most `depth` deep.
fn tolerance(abs_sum: f64, depth: usize) -> f64 {
    2.0 * depth as f64 * U32 * abs_sum
}

#[test]
fn ladder_f32_random_within_rounding_bound() {
    let handle = match gpu("ladder_f32_random_within_rounding_bound") {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let mut rng = Rng::fresh("ladder_f32_uniform");
    let host: Vec<f32> = (0..(1 << 26) + 3).map(|_| rng.unit() as f32).collect();
    for_every_strategy(gpu, &host, f64_sum, |got, want, len, offset, s, grid| {
        let (_, finish, block, grain) = s.resolve(4 * len);
        let (block, grain, atomic) = (block as usize, grain as usize, finish == Finish::Atomic);
        let threads = (grid.max(1) * block).max(1);
        // per-thread sequential adds, the block tree, then the blocks: sequential if atomic,
        // else each finishing thread folds grid / block partials, then a block tree
        let per_thread = 4 * grain * (len / threads + 2);
        let across = if atomic { grid } else { grid / block + log2_ceil(block) + 2 };
        let depth = per_thread + log2_ceil(block) + across + 4;
        let tol = tolerance(want, depth);
        assert!(
            (got as f64 - want).abs() <= tol,
            "seed {} {:?} len {} offset {}: got {} want {} tol {}",
            rng.seed,
            s,
            len,
            offset,
            got,
            want,
            tol
        );
    });
}

#[test]
fn auto_is_deterministic_and_second_pass_agrees() {
    let handle = match gpu("auto_is_deterministic_and_second_pass_agrees") {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let mut rng = Rng::fresh("determinism");
    for &n in [(1usize << 24) + 3, 1 << 20, 1000].iter() {
        let host: Vec<f32> = (0..n).map(|_| rng.range(-1.0, 1.0) as f32).collect();
        let dev = upload(&host);
        let first = gpu.reduce_sum(&dev, ReduceStrategy::Auto).unwrap();
        for _ in 0..20 {
            let again = gpu.reduce_sum(&dev, ReduceStrategy::Auto).unwrap();
            assert_eq!(again.to_bits(), first.to_bits(), "seed {} n {}: Auto is not deterministic", rng.seed, n);
        }
        // The second pass is deterministic too, and agrees with Auto's flagged finish within
        // rounding (it folds the same partials with a different block size, so bits may differ).
        let (kernel, _, block, grain) = ReduceStrategy::Auto.resolve(4 * n);
        let s = ReduceStrategy::Ladder { kernel, finish: Finish::SecondPass, block, grain };
        let second = gpu.reduce_sum(&dev, s).unwrap();
        assert_eq!(gpu.reduce_sum(&dev, s).unwrap().to_bits(), second.to_bits(), "seed {} n {}", rng.seed, n);
        let abs: f64 = host.iter().map(|&v| (v as f64).abs()).sum();
        assert!(
            (second as f64 - first as f64).abs() <= tolerance(abs, 64),
            "seed {} n {}: {} vs {}",
            rng.seed,
            n,
            second,
            first
        );
    }
}

#[test]
fn reduce_into_writes_the_output_and_checks_it() {
    let handle = match gpu("reduce_into_writes_the_output_and_checks_it") {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let host: Vec<i32> = (1..=1000).collect();
    let dev = upload(&host);
    let mut out = upload(&[i32::MIN]); // poisoned
    assert_eq!(gpu.reduce_sum_into(&dev, &mut out, ReduceStrategy::Auto).unwrap(), None);
    assert_eq!(download(gpu, &out)[0], 500_500);
    let mut empty_out = upload::<i32>(&[]);
    assert!(matches!(
        gpu.reduce_sum_into(&dev, &mut empty_out, ReduceStrategy::Auto),
        Err(cudakernels::Error::LengthMismatch { .. })
    ));
    let mut out = upload(&[i32::MIN]);
    gpu.reduce_sum_into(&dev.index(0..0), &mut out, ReduceStrategy::Auto).unwrap();
    assert_eq!(download(gpu, &out)[0], 0, "an empty sum is 0");
}

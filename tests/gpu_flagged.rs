//! The `Flagged` finish whoever folds: the test-only entry point that draws its tickets in
//! reverse block order (block 0, dispatched first, folds) gives the bits of the library's own
//! launch, and leaves its slots and counter at zero; results are the same bits over many calls
//! and on two streams.
mod common;
use common::{download, gpu, upload_on, Rng};
use cudakernels::cust::launch;
use cudakernels::cust::memory::{DeviceBuffer, DeviceSlice};
use cudakernels::cust::module::Module;
use cudakernels::cust::stream::Stream;
use cudakernels::{Finish, Gpu, LadderKernel, LoadedImage, ReduceStrategy, IMAGES, PTX};
use std::sync::Arc;

/// The test entry's block size.
const BLOCK: u32 = 256;

/// The library's own image for this device, loaded into its context by the test.
fn own_module(gpu: &Gpu) -> Module {
    gpu.bind().unwrap();
    match gpu.image() {
        LoadedImage::Cubin { sm } => Module::from_cubin(IMAGES.cubin(sm).expect("the loaded cubin"), &[]),
        LoadedImage::Ptx => Module::from_ptx(PTX, &[]),
    }
    .expect("loading the kernels")
}

/// Random f32s of mixed magnitudes: their sum depends on the order of every addition.
fn mixed(rng: &mut Rng, n: usize) -> Vec<f32> {
    (0..n).map(|_| (rng.range(-1.0, 1.0) * 10f64.powi(rng.below(7) as i32 - 3)) as f32).collect()
}

/// Launches `test_flagged_reverse_tickets_f32_b256` over `x` with `grid` blocks on `stream`,
/// into `slots`, `counter` and `out`.
fn reverse_tickets(
    module: &Module,
    stream: &Stream,
    x: &DeviceSlice<f32>,
    grain: u32,
    grid: u32,
    (slots, counter, out): (&DeviceBuffer<u64>, &DeviceBuffer<u32>, &DeviceBuffer<f32>),
) {
    let f = module.get_function("test_flagged_reverse_tickets_f32_b256").expect("the test entry point");
    let (input, len) = (x.as_device_ptr(), x.len());
    let (slots, counter, out) = (slots.as_device_ptr(), counter.as_device_ptr(), out.as_device_ptr());
    // SAFETY: the entry takes (input: &[f32] as pointer and length, grain: u32, partials: *mut
    // f32 (64-bit flagged slots), counter: *mut u32, out: *mut f32), launched with blocks of
    // 256; `slots` holds `grid` zeroed words and `counter` is zero; every block of the grid
    // is resident at once (grid ≤ 32, far below one block per SM's worth); all buffers
    // outlive the launch, which the caller waits for.
    unsafe { launch!(f<<<grid, BLOCK, 0, stream>>>(input, len, grain, slots, counter, out)) }.expect("launch");
}

#[test]
fn block_zero_folding_gives_the_bits_of_the_librarys_flagged_launch() {
    let gpu = match gpu("block_zero_folding_gives_the_bits_of_the_librarys_flagged_launch") {
        Some(g) => g,
        None => return,
    };
    let module = own_module(&gpu);
    let s = gpu.new_stream().unwrap();
    let mut rng = Rng::fresh("reverse_tickets");
    for case in 0..12 {
        let (grid, grain) = (8 + rng.below(25), 1 + rng.below(4) as u32);
        // Vectorized takes `grain` 16-byte vectors per thread: 1024·grain floats per block.
        let per_block = BLOCK as usize * grain as usize * 4;
        let (n, offset) = ((grid - 1) * per_block + 1 + rng.below(per_block - 4), rng.below(4));
        let planned = cudakernels::ladder_grid(
            LadderKernel::Vectorized,
            n,
            BLOCK,
            grain,
            gpu.sm_count(),
            gpu.max_threads_per_sm(),
        );
        let what = format!("seed {} case {}: n {} offset {} grain {} grid {}", rng.seed, case, n, offset, grain, grid);
        assert_eq!(planned, grid, "{}: the library would launch another grid", what);
        let host = mixed(&mut rng, n + offset);
        let x = upload_on(&s, &host);
        let x = x.index(offset..);
        let flagged =
            ReduceStrategy::Ladder { kernel: LadderKernel::Vectorized, finish: Finish::Flagged, block: BLOCK, grain };
        let mut lib_out = upload_on(&s, &[f32::NAN]);
        s.reduce_sum_into(&x, &mut lib_out, flagged).unwrap();
        let want = download(&s, &lib_out)[0];
        let (slots, counter, out) =
            (upload_on(&s, &vec![0u64; grid]), upload_on(&s, &[0u32]), upload_on(&s, &[f32::NAN]));
        reverse_tickets(&module, s.stream().unwrap(), &x, grain, grid as u32, (&slots, &counter, &out));
        let got = download(&s, &out)[0];
        assert_eq!(got.to_bits(), want.to_bits(), "{}: block 0 folded {} against {}", what, got, want);
        assert_eq!(download(&s, &counter), [0], "{}: the counter was not reset", what);
        assert!(download(&s, &slots).iter().all(|&w| w == 0), "{}: slots left filled", what);
        let reference: f64 = host[offset..].iter().map(|&v| v as f64).sum();
        let abs: f64 = host[offset..].iter().map(|&v| v.abs() as f64).sum();
        // Summation depth: per thread ≤ `grain` vectors of 4 plus a head and a tail element,
        // two block trees of 10 levels (the block's, the fold's), ≤ 1 slot per folding thread.
        let depth = 4.0 * grain as f64 + 2.0 + 20.0 + 1.0;
        assert!(
            (want as f64 - reference).abs() <= depth * common::U32 * abs,
            "{}: sum {} against {}",
            what,
            want,
            reference
        );
    }
}

#[test]
fn flagged_sums_are_the_same_bits_over_many_calls_and_two_streams() {
    let gpu = match gpu("flagged_sums_are_the_same_bits_over_many_calls_and_two_streams") {
        Some(g) => Arc::new(g),
        None => return,
    };
    let mut rng = Rng::fresh("flagged_determinism");
    // Large enough that the grid is the device's resident blocks: hundreds of blocks, so the
    // block that draws the last ticket varies from call to call.
    let n = 3_000_000 + rng.below(1000);
    let host = Arc::new(mixed(&mut rng, n));
    let strategies = [
        ReduceStrategy::Auto,
        ReduceStrategy::Ladder { kernel: LadderKernel::Vectorized, finish: Finish::Flagged, block: 256, grain: 1 },
        ReduceStrategy::Ladder { kernel: LadderKernel::WarpShuffle, finish: Finish::Flagged, block: 512, grain: 8 },
    ];
    let seed = rng.seed;
    let workers: Vec<_> = (0..2)
        .map(|t| {
            let (gpu, host) = (gpu.clone(), host.clone());
            std::thread::spawn(move || {
                let s = gpu.new_stream().unwrap();
                let x = upload_on(&s, &host);
                let mut out = upload_on(&s, &[f32::NAN]);
                let mut bits = Vec::new();
                for &strategy in strategies.iter() {
                    let first = s.reduce_sum(&x, strategy).unwrap().to_bits();
                    for call in 0..200 {
                        let got = s.reduce_sum(&x, strategy).unwrap().to_bits();
                        assert_eq!(got, first, "seed {} stream {} {:?} call {}", seed, t, strategy, call);
                    }
                    s.reduce_sum_into(&x, &mut out, strategy).unwrap();
                    assert_eq!(
                        download(&s, &out)[0].to_bits(),
                        first,
                        "seed {} stream {} {:?} into",
                        seed,
                        t,
                        strategy
                    );
                    bits.push(first);
                }
                bits
            })
        })
        .collect();
    let bits: Vec<Vec<u32>> = workers.into_iter().map(|w| w.join().expect("a worker panicked")).collect();
    assert_eq!(bits[0], bits[1], "seed {}: the two streams disagree", seed);
}

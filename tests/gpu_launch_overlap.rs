//! Launches that overlap the kernel ahead of them (programmatic dependent launch,
//! `LaunchOverlap`): where they are on (the sm_90 cubin, not the PTX), and a chain of calls that
//! each read the last one's output, queued back to back without a wait, against the CPU, with
//! the overlap and without.
mod common;
use common::*;
use cudakernels::{GpuStream, ImageChoice, LaunchOverlap, Op, SgemvOptions};

/// The driver's CUDA version (`cuDriverGetVersion`: 1000 · major + 10 · minor).
fn driver_version() -> i32 {
    let mut version = 0;
    // SAFETY: one int is written; the driver was initialized when the GPU was opened.
    let result = unsafe { cudakernels::cust::sys::cuDriverGetVersion(&mut version) };
    assert_eq!(result, cudakernels::cust::sys::CUresult::CUDA_SUCCESS);
    version
}

#[test]
fn the_sm90_cubin_overlaps_launches_unless_told_not_to() {
    let gpu = match gpu("the_sm90_cubin_overlaps_launches_unless_told_not_to") {
        Some(g) => g,
        None => return,
    };
    let stream = gpu.new_stream().unwrap();
    let expected = gpu.image().waits_for_prerequisite_grids() && driver_version() >= 12030;
    println!("{} ({:?}, driver {}): launches overlap: {}", gpu.name(), gpu.image(), driver_version(), expected);
    if gpu.compute_capability().0 == 9 && driver_version() >= 12030 {
        assert!(expected, "compute capability 9.x should load the sm_90 cubin, whose entry points wait");
    }
    assert_eq!(stream.launches_overlap(), expected);
    stream.set_launch_overlap(LaunchOverlap::Serial);
    assert!(!stream.launches_overlap());
    stream.set_launch_overlap(LaunchOverlap::Auto);
    assert_eq!(stream.launches_overlap(), expected);
}

/// The PTX (compute_80) has no `griddepcontrol.wait`, so a device that loaded it launches each
/// kernel after the one ahead of it, and still computes the chain.
#[test]
fn the_ptx_launches_serially() {
    let gpu = match gpu_with("the_ptx_launches_serially", ImageChoice::Ptx) {
        Some(g) => g,
        None => return,
    };
    let stream = gpu.new_stream().unwrap();
    assert!(!gpu.image().waits_for_prerequisite_grids(), "{:?}", gpu.image());
    assert!(!stream.launches_overlap());
    chain(&stream, &mut Rng::fresh("the_ptx_launches_serially"), 256, 50);
}

/// A random permutation of 0..n.
fn permutation(rng: &mut Rng, n: usize) -> Vec<usize> {
    let mut p: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        p.swap(i, rng.below(i + 1));
    }
    p
}

/// The n × n matrix with a 1 at (i, p[i]): (P·x)[i] = x[p[i]], (Pᵀ·y)[p[i]] = y[i], exactly.
fn permutation_matrix(p: &[usize]) -> Vec<f32> {
    let n = p.len();
    let mut a = vec![0.0f32; n * n];
    for (i, &j) in p.iter().enumerate() {
        a[i * n + j] = 1.0;
    }
    a
}

/// `steps` rounds of y = P·x (Op::N) then x = Qᵀ·y (Op::T), queued with no wait between them,
/// so each kernel reads what the one before it wrote; compared with the same permutations on
/// the CPU after one wait at the end.
fn chain(stream: &GpuStream, rng: &mut Rng, n: usize, steps: usize) {
    let (p, q) = (permutation(rng, n), permutation(rng, n));
    let (a_p, a_q) = (upload(&permutation_matrix(&p)), upload(&permutation_matrix(&q)));
    let mut host: Vec<f32> = (0..n).map(|_| rng.below(1 << 20) as f32 - (1 << 19) as f32).collect();
    let mut x = upload(&host);
    let mut y = upload(&vec![f32::NAN; n]);
    stream.synchronize().unwrap();
    for _ in 0..steps {
        stream.sgemv(n, n, &a_p, &x, &mut y, SgemvOptions::default()).unwrap();
        stream.sgemv(n, n, &a_q, &y, &mut x, SgemvOptions { op: Op::T, ..Default::default() }).unwrap();
        let after_p: Vec<f32> = p.iter().map(|&j| host[j]).collect();
        for (i, &j) in q.iter().enumerate() {
            host[j] = after_p[i];
        }
    }
    let got = download(stream, &x);
    let wrong = got.iter().zip(&host).filter(|(g, h)| g.to_bits() != h.to_bits()).count();
    assert_eq!(
        wrong,
        0,
        "n = {}, {} steps, overlap {}: {} of {} elements differ (seed {})",
        n,
        steps,
        stream.launches_overlap(),
        wrong,
        n,
        rng.seed
    );
}

#[test]
fn chained_calls_read_what_the_call_before_wrote() {
    let gpu = match gpu("chained_calls_read_what_the_call_before_wrote") {
        Some(g) => g,
        None => return,
    };
    let mut rng = Rng::fresh("chained_calls_read_what_the_call_before_wrote");
    let stream = gpu.new_stream().unwrap();
    for overlap in [LaunchOverlap::Auto, LaunchOverlap::Serial] {
        stream.set_launch_overlap(overlap);
        // Short kernels, where the next launch overlaps most of the last one, then longer ones.
        for &(n, steps) in &[(33, 400), (256, 400), (1000, 200), (4097, 40)] {
            chain(&stream, &mut rng, n, steps);
        }
    }
}

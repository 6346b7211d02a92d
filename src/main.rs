//! The main job: runs reduce and sgemv on default inputs, checks them against an f64 CPU
//! reference, and prints device, size, time and GB/s. Exits 1 without a CUDA device.
use cudakernels::cust::memory::{CopyDestination, DeviceBuffer};
use cudakernels::{open, Error, GpuStream, Op, RawSlice, ReduceStrategy, SgemvCall, SgemvOptions};
use std::process::exit;
use timing::{gbps, median_ms};

/// The bench's event timing (only part of it is used here).
#[allow(dead_code)]
#[path = "bin/bench/timing.rs"]
mod timing;

/// A small deterministic generator for default inputs (splitmix64).
fn inputs(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            ((z >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

fn run(gpu: &GpuStream) -> Result<bool, Error> {
    let mut ok = true;
    println!("device: {} ({} SMs)", gpu.name(), gpu.sm_count());
    println!("| job | size | median µs | GB/s | check |");
    println!("|---|---|---|---|---|");

    let n = 1 << 24;
    let host = inputs(n, 1);
    let x = DeviceBuffer::from_slice(&host).map_err(Error::cuda("cuMemcpyHtoD"))?;
    let want: f64 = host.iter().map(|&v| v as f64).sum();
    let abs: f64 = host.iter().map(|&v| v.abs() as f64).sum();
    let got = gpu.reduce_sum(&x, ReduceStrategy::Auto)? as f64;
    let tol = 1e-5 * abs + 1e-3;
    let pass = (got - want).abs() <= tol;
    ok &= pass;
    let mut out = DeviceBuffer::<f32>::zeroed(1).map_err(Error::cuda("cuMemAlloc"))?;
    let ms = median_ms(gpu, 3, 20, |_| gpu.reduce_sum_into(&x, &mut out, ReduceStrategy::Auto).map(|_| ()))?;
    println!(
        "| reduce_sum f32 (Auto) | n = 2^24 | {:.1} | {:.0} | {} (got {:.3}, f64 {:.3}) |",
        ms * 1e3,
        gbps(n * 4, ms),
        if pass { "ok" } else { "FAIL" },
        got,
        want
    );

    for &(m, ncols) in &[(16384usize, 16usize), (16384, 32), (16384, 128), (1 << 20, 16), (1 << 20, 32), (1 << 20, 128)]
    {
        let a_host = inputs(m * ncols, 2);
        let x_host = inputs(ncols, 3);
        let a = DeviceBuffer::from_slice(&a_host).map_err(Error::cuda("cuMemcpyHtoD"))?;
        let xv = DeviceBuffer::from_slice(&x_host).map_err(Error::cuda("cuMemcpyHtoD"))?;
        let mut y = DeviceBuffer::from_slice(&vec![f32::NAN; m]).map_err(Error::cuda("cuMemcpyHtoD"))?;
        gpu.sgemv(m, ncols, &a, &xv, &mut y, SgemvOptions::default())?;
        let mut y_host = vec![0f32; m];
        gpu.synchronize()?;
        y.copy_to(&mut y_host[..]).map_err(Error::cuda("cuMemcpyDtoH"))?;
        let mut pass = true;
        for r in 0..m {
            let row = &a_host[r * ncols..(r + 1) * ncols];
            let want: f64 = row.iter().zip(&x_host).map(|(&a, &b)| a as f64 * b as f64).sum();
            let abs: f64 = row.iter().zip(&x_host).map(|(&a, &b)| (a as f64 * b as f64).abs()).sum();
            let within = (y_host[r] as f64 - want).abs() <= 2.0 * ncols as f64 * f32::EPSILON as f64 * abs + 1e-6;
            if !within {
                pass = false;
            }
        }
        ok &= pass;
        let ms = median_ms(gpu, 3, 20, |_| gpu.sgemv(m, ncols, &a, &xv, &mut y, SgemvOptions::default()))?;
        let (a_raw, x_raw, y_raw) = (RawSlice::of(&a), RawSlice::of(&xv), RawSlice::of(&y));
        let call = SgemvCall { op: Op::N, m, n: ncols, lda: ncols, a: a_raw, x: x_raw, y: y_raw };
        let kernel = gpu.sgemv_auto(&call.validate()?)?;
        println!(
            "| sgemv {:?} | m = {}, n = {} | {:.1} | {:.0} | {} |",
            kernel,
            m,
            ncols,
            ms * 1e3,
            gbps(4 * (m * ncols + ncols + m), ms),
            if pass { "ok" } else { "FAIL" }
        );
    }
    Ok(ok)
}

fn main() {
    let gpu = match open() {
        Ok(gpu) => gpu,
        Err(Error::NoDevice) => {
            eprintln!("error: no CUDA device was found (this job needs an NVIDIA GPU and driver)");
            exit(1);
        }
        Err(e) => {
            eprintln!("error: could not open the GPU: {}", e);
            exit(1);
        }
    };
    match run(gpu.default_stream()) {
        Ok(true) => {}
        Ok(false) => {
            eprintln!("error: a GPU result did not match the CPU reference");
            exit(1);
        }
        Err(e) => {
            eprintln!("error: {}", e);
            exit(1);
        }
    }
}

//! A sum, a minmax (f32 and f16) and an sgemv on the GPU, each checked against the CPU.
//! Exits 1 with one line where there is no CUDA device, 2 where a result is wrong.
use cudakernels::cust::memory::{CopyDestination, DeviceBuffer};
use cudakernels::{Error, ReduceStrategy, SgemvOptions};

fn main() {
    match run() {
        Ok(true) => {}
        Ok(false) => std::process::exit(2),
        Err(Error::NoDevice) => {
            eprintln!("error: no CUDA device was found (this job needs an NVIDIA GPU and driver)");
            std::process::exit(1);
        }
        Err(e) => {
            eprintln!("error: {}", e);
            std::process::exit(1);
        }
    }
}

/// Values in [-1, 1) from a splitmix64 sequence seeded by the clock.
fn random(n: usize, seed: &mut u64) -> Vec<f32> {
    (0..n)
        .map(|_| {
            *seed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = *seed;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            ((z ^ (z >> 31)) >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        })
        .collect()
}

/// Prints a GPU result beside the CPU's (for sgemv: rows within tolerance, of all rows).
fn check(what: &str, got: f64, want: f64, tolerance: f64) -> bool {
    let ok = (got - want).abs() <= tolerance;
    println!("{:<8} gpu {:>16.6}  cpu {:>16.6}  {}", what, got, want, if ok { "ok" } else { "WRONG" });
    ok
}

fn run() -> Result<bool, Error> {
    let gpu = cudakernels::open()?;
    println!("{} (compute capability {:?}), kernels: {:?}", gpu.name(), gpu.compute_capability(), gpu.image());
    let stream = gpu.default_stream(); // entry points are methods of a stream
    let mut seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
    let upload = |v: &[f32]| DeviceBuffer::from_slice(v).map_err(Error::cuda("cuMemcpyHtoD"));

    // Sum of 10^6 floats: f32 partial sums in a tree, so the error stays within a few ulps of Σ|x|
    // per level (about 20 levels).
    let x = random(1_000_000, &mut seed);
    let dx = upload(&x)?;
    let abs: f64 = x.iter().map(|&v| v.abs() as f64).sum();
    let sum = stream.reduce_sum(&dx, ReduceStrategy::Auto)?;
    let mut ok = check("sum", sum as f64, x.iter().map(|&v| v as f64).sum(), 21.0 * f32::EPSILON as f64 * abs);

    // Minmax is exact.
    let (lo, hi) = stream.minmax(&dx)?;
    ok &= check("min", lo as f64, x.iter().fold(f32::INFINITY, |a, &b| a.min(b)) as f64, 0.0);
    ok &= check("max", hi as f64, x.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b)) as f64, 0.0);

    // The same values as f16 (`cudakernels::f16`, the `half` crate's): summed in f32, minmax exact.
    let h: Vec<cudakernels::f16> = x.iter().map(|&v| cudakernels::f16::from_f32(v)).collect();
    let dh = DeviceBuffer::from_slice(&h).map_err(Error::cuda("cuMemcpyHtoD"))?;
    let wide: Vec<f64> = h.iter().map(|v| v.to_f64()).collect();
    let abs: f64 = wide.iter().map(|v| v.abs()).sum();
    let hsum = stream.sum(&dh)?;
    ok &= check("f16 sum", hsum as f64, wide.iter().sum(), 21.0 * f32::EPSILON as f64 * abs);
    let (hlo, hhi) = stream.minmax(&dh)?;
    ok &= check("f16 min", hlo.to_f64(), wide.iter().fold(f64::INFINITY, |a, &b| a.min(b)), 0.0);
    ok &= check("f16 max", hhi.to_f64(), wide.iter().fold(f64::NEG_INFINITY, |a, &b| a.max(b)), 0.0);

    // y = A v for a 1000 × 300 row-major A, y poisoned first; each row within n ulps of Σ|a·v|.
    let (m, n) = (1000, 300);
    let (a, v) = (random(m * n, &mut seed), random(n, &mut seed));
    let (da, dv) = (upload(&a)?, upload(&v)?);
    let mut y = upload(&vec![f32::NAN; m])?;
    stream.sgemv(m, n, &da, &dv, &mut y, SgemvOptions::default())?;
    stream.synchronize()?;
    let mut got = vec![0f32; m];
    y.copy_to(&mut got[..]).map_err(Error::cuda("cuMemcpyDtoH"))?;
    let mut rows_ok = 0;
    for (r, &g) in got.iter().enumerate() {
        let products = a[r * n..(r + 1) * n].iter().zip(&v).map(|(&p, &q)| p as f64 * q as f64);
        let (want, bound) = products.fold((0.0, 0.0), |(s, b), p| (s + p, b + p.abs()));
        rows_ok += ((g as f64 - want).abs() <= n as f64 * f32::EPSILON as f64 * bound) as usize;
    }
    ok &= check("sgemv", rows_ok as f64, m as f64, 0.0);
    println!("{}", if ok { "all results match the CPU" } else { "SOME RESULTS ARE WRONG" });
    Ok(ok)
}

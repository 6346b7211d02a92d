//! Times what a new process pays before its first result: `open_with` (driver init, context,
//! module load: a cubin, or the PTX through the driver's JIT), a second handle in the same
//! process, and the first call. Run it in a fresh process per figure; set
//! `CUDA_CACHE_DISABLE=1` to time the JIT without its disk cache.
//!   open_time [auto|ptx]
use cudakernels::cust::memory::DeviceBuffer;
use cudakernels::{open_with, Error, ImageChoice, ReduceStrategy};
use std::time::Instant;

fn main() {
    let choice = match std::env::args().nth(1).as_deref() {
        None | Some("auto") => ImageChoice::Auto,
        Some("ptx") => ImageChoice::Ptx,
        Some(other) => {
            eprintln!("error: unknown image choice {:?} (auto or ptx)", other);
            std::process::exit(2);
        }
    };
    match run(choice) {
        Ok(true) => {}
        Ok(false) => std::process::exit(2),
        Err(e) => {
            eprintln!("error: {}", e);
            std::process::exit(1);
        }
    }
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1e3
}

/// Whether the first call summed correctly (integer values: exact in f32).
fn run(choice: ImageChoice) -> Result<bool, Error> {
    let t = Instant::now();
    let gpu = open_with(0, choice)?;
    let open_ms = ms(t);
    let t = Instant::now();
    let second = open_with(0, choice)?;
    let second_ms = ms(t);
    drop(second);
    let host: Vec<f32> = (0..4096).map(|i| (i % 7) as f32).collect();
    let x = DeviceBuffer::from_slice(&host).map_err(Error::cuda("cuMemcpyHtoD"))?;
    let t = Instant::now();
    let sum = gpu.default_stream().reduce_sum(&x, ReduceStrategy::Auto)?;
    let first_call_ms = ms(t);
    let want: f32 = host.iter().sum();
    println!(
        "open_time {:?} on {}: open {:.1} ms, second handle {:.1} ms, first call {:.2} ms (CUDA_CACHE_DISABLE={})",
        gpu.image(),
        gpu.name(),
        open_ms,
        second_ms,
        first_call_ms,
        std::env::var("CUDA_CACHE_DISABLE").unwrap_or_default()
    );
    if sum != want {
        eprintln!("error: the first call summed to {}, expected {}", sum, want);
    }
    Ok(sum == want)
}

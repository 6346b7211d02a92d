//! Shared test helpers: GPU detection with an honest skip, fresh random inputs, transfers.
#![allow(dead_code)]
pub mod arg;
pub mod axis;
pub mod gemv;
use cudakernels::cust::memory::{AsyncCopyDestination, CopyDestination, DeviceBuffer, DeviceCopy, DeviceSlice};
use cudakernels::{Gpu, GpuStream, ImageChoice};
use std::io::Write;

pub mod typed;

/// The GPU, or `None` after printing a skip line (printed past the test harness's capture).
/// With `REQUIRE_GPU=1` a missing GPU fails the test instead.
pub fn gpu(test: &str) -> Option<Gpu> {
    gpu_with(test, ImageChoice::Auto)
}

/// [`gpu`], loading the kernel image `choice` picks.
pub fn gpu_with(test: &str, choice: ImageChoice) -> Option<Gpu> {
    match cudakernels::open_with(0, choice) {
        Ok(gpu) => Some(gpu),
        Err(e) => {
            if std::env::var("REQUIRE_GPU").map(|v| v == "1").unwrap_or(false) {
                panic!("REQUIRE_GPU=1 but the GPU could not be opened: {}", e);
            }
            let _ = writeln!(std::io::stderr(), "SKIPPED {}: no CUDA device ({})", test, e);
            None
        }
    }
}

/// splitmix64, seeded fresh each run; the seed is printed in failure messages.
pub struct Rng {
    pub seed: u64,
    state: u64,
}

impl Rng {
    pub fn fresh(name: &str) -> Rng {
        let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
        let h = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3));
        let seed = std::env::var("TEST_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(t ^ h);
        Rng { seed, state: seed }
    }
    /// A generator from a given seed (e.g. one per thread, derived from a fresh one).
    pub fn with_seed(seed: u64) -> Rng {
        Rng { seed, state: seed }
    }
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    /// Uniform in [lo, hi).
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }
}

pub fn upload<T: DeviceCopy>(host: &[T]) -> DeviceBuffer<T> {
    DeviceBuffer::from_slice(host).expect("upload")
}

/// Uploads `host` in `stream`'s order (a kernel on a non-blocking stream does not wait for
/// the legacy stream's copies), then waits for it.
pub fn upload_on<T: DeviceCopy>(stream: &GpuStream, host: &[T]) -> DeviceBuffer<T> {
    // SAFETY: the buffer is fully written by the copy before anything reads it.
    let mut dev = unsafe { DeviceBuffer::uninitialized(host.len()) }.expect("alloc");
    // SAFETY: `host` outlives the copy, which is waited for below.
    unsafe { dev.async_copy_from(host, stream.stream().unwrap()) }.expect("upload");
    stream.synchronize().expect("synchronize");
    dev
}

/// Waits for `gpu` (any stream of the library), then copies `dev` to the host.
pub fn download<T: DeviceCopy + Default + Clone>(gpu: &GpuStream, dev: &DeviceSlice<T>) -> Vec<T> {
    gpu.synchronize().expect("synchronize");
    let mut host = vec![T::default(); dev.len()];
    dev.copy_to(&mut host[..]).expect("download");
    host
}

/// Unit roundoff of f32 (2^-24).
pub const U32: f64 = 5.960_464_477_539_063e-8;
/// Unit roundoff of f64 (2^-53).
pub const U64: f64 = 1.110_223_024_625_156_5e-16;

/// `ceil(log2(n))` for n ≥ 1.
pub fn log2_ceil(n: usize) -> usize {
    (usize::BITS - n.max(1).saturating_sub(1).leading_zeros()) as usize
}

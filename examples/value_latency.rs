//! Value-call latency on 4096 elements, for ordinary results and for results whose bytes are
//! all 0xa5: host µs per call (median, mean, 90th percentile). Uses the public API only, so
//! the same file builds against an older checkout: run both builds back to back on one GPU to
//! compare them.
//!
//! `cargo run --release --example value_latency [calls]` (5000 by default).
use cudakernels::cust::memory::DeviceBuffer;
use cudakernels::{ReduceStrategy, Result};

/// Runs `call` `calls` times after 200 untimed ones; prints one row. `call` says whether its
/// result was the expected one.
fn row(name: &str, calls: usize, mut call: impl FnMut() -> Result<bool>) -> Result<()> {
    for _ in 0..200 {
        assert!(call()?, "{}: wrong result", name);
    }
    let mut us: Vec<f64> = (0..calls)
        .map(|_| {
            let t = std::time::Instant::now();
            let ok = call();
            (t.elapsed().as_secs_f64() * 1e6, ok)
        })
        .map(|(t, ok)| if ok.unwrap_or(false) { t } else { f64::NAN })
        .collect();
    assert!(us.iter().all(|t| !t.is_nan()), "{}: a wrong result or an error", name);
    let mean = us.iter().sum::<f64>() / calls as f64;
    us.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!("| {} | {:.2} | {:.2} | {:.2} |", name, us[calls / 2], mean, us[calls * 9 / 10]);
    Ok(())
}

fn main() -> Result<()> {
    let calls = std::env::args().nth(1).and_then(|c| c.parse().ok()).unwrap_or(5000);
    let gpu = cudakernels::open()?;
    let s = gpu.new_stream()?;
    let n = 4096;
    let up = |v: Vec<f32>| DeviceBuffer::from_slice(&v).expect("upload");
    let ordinary = up((0..n).map(|i| (i % 7) as f32 - 3.0).collect());
    let (pattern, pattern64) = (f32::from_bits(0xa5a5_a5a5), f64::from_bits(0xa5a5_a5a5_a5a5_a5a5));
    // One pattern value among zeros: its sum is exactly the pattern.
    let lone = up((0..n).map(|i| if i == n / 3 { pattern } else { 0.0 }).collect());
    let lone64: Vec<f64> = (0..n).map(|i| if i == n / 3 { pattern64 } else { 0.0 }).collect();
    let lone64 = DeviceBuffer::from_slice(&lone64).expect("upload");
    let all64 = DeviceBuffer::from_slice(&vec![pattern64; n]).expect("upload");
    let bytes = DeviceBuffer::from_slice(&vec![0xa5u8; n]).expect("upload");
    let want = (0..n).map(|i| ((i % 7) as f32 - 3.0) as f64).sum::<f64>() as f32;
    println!("value calls, 4096 elements, on {}: {} calls per row\n", gpu.name(), calls);
    println!("| call | median µs | mean µs | p90 µs |");
    println!("|---|---|---|---|");
    let auto = ReduceStrategy::Auto;
    row("reduce_sum f32", calls, || Ok(s.reduce_sum(&ordinary, auto)? == want))?;
    row("reduce_sum f32 = 0xa5a5a5a5", calls, || Ok(s.reduce_sum(&lone, auto)?.to_bits() == pattern.to_bits()))?;
    row("sum f32", calls, || Ok(s.sum(&ordinary)? == want))?;
    row("sum f64 = 0xa5…", calls, || Ok(s.sum(&lone64)?.to_bits() == pattern64.to_bits()))?;
    row("minmax f32", calls, || Ok(s.minmax(&ordinary)? == (-3.0, 3.0)))?;
    row("minmax f64 = (0xa5…, 0xa5…)", calls, || {
        let (lo, hi) = s.minmax(&all64)?;
        Ok(lo.to_bits() == pattern64.to_bits() && hi.to_bits() == pattern64.to_bits())
    })?;
    row("minmax u8 = (0xa5, 0xa5)", calls, || Ok(s.minmax(&bytes)? == (0xa5, 0xa5)))?;
    Ok(())
}

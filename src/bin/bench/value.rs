//! A value returned to the host, as a program waits for it: µs per call on the host clock, on
//! one input (in L2), on the default and a new stream, and where the time goes. Peers in the
//! same run: `torch_peers.py` (section value) and `native_peers` (CUB + pinned copy + stream
//! sync), timed the same way.
use crate::harness::{
    per_call_us, pow2, small_int,
    Fmt::{Fixed, Text},
    Table,
};
use cudakernels::cust::memory::{DeviceBuffer, DevicePointer, DeviceSlice, LockedBuffer};
use cudakernels::{Error, Gpu, GpuStream, ReduceStrategy, Result};

/// Timed calls per row.
const VALUE_CALLS: usize = 5000;

const TABLE: Table = Table::markdown(
    "| call | stream | n | median µs | mean µs | check |",
    &[Text, Text, Text, Fixed(2), Fixed(2), Text],
);

/// One value call of the bench, returning whether its result was right.
type ValueCall<'a> = Box<dyn FnMut() -> Result<bool> + 'a>;

pub fn run(gpu: &Gpu, _copy_bw: f64) -> Result<()> {
    println!("### value to the host (host clock per call, median and mean of {})\n", VALUE_CALLS);
    TABLE.header();
    let other = gpu.new_stream()?;
    for &log_n in [12usize, 20].iter() {
        let n = 1usize << log_n;
        let host: Vec<f32> = (0..n).map(small_int).collect();
        let want = host.iter().map(|&v| v as f64).sum::<f64>() as f32;
        let x = DeviceBuffer::from_slice(&host).map_err(Error::cuda("cuMemcpyHtoD"))?;
        for (stream, s) in [("default", gpu.default_stream()), ("new_stream", &other)] {
            let rows: [(&str, ValueCall<'_>); 3] = [
                ("reduce_sum(Auto)", Box::new(|| Ok(s.reduce_sum(&x, ReduceStrategy::Auto)? == want))),
                ("sum", Box::new(|| Ok(s.sum(&x)? == want))),
                ("minmax", Box::new(|| Ok(s.minmax(&x)? == (-3.0, 3.0)))),
            ];
            for (call, f) in rows {
                row(call, stream, log_n, per_call_us(100, VALUE_CALLS, f)?);
            }
        }
        breakdown(gpu.default_stream(), &x, want, log_n)?;
    }
    unwritten_pattern(gpu.default_stream())?;
    println!();
    Ok(())
}

/// A result whose bytes are all 0xa5 (the pattern the value slot was once filled with), an i32
/// sum of 4096 elements: every result value must take the same time.
fn unwritten_pattern(s: &GpuStream) -> Result<()> {
    let want = i32::from_ne_bytes([0xa5; 4]);
    let mut host = vec![0i32; 1 << 12];
    host[0] = want;
    let x = DeviceBuffer::from_slice(&host).map_err(Error::cuda("cuMemcpyHtoD"))?;
    let call = || Ok(s.reduce_sum(&x, ReduceStrategy::Auto)? == want);
    row("reduce_sum(Auto), i32 sum with every byte 0xa5", "default", 12, per_call_us(100, VALUE_CALLS, call)?);
    Ok(())
}

/// One row from [`per_call_us`]'s (median, mean, every check passed).
fn row(call: &str, stream: &str, log_n: usize, (median, mean, ok): (f64, f64, bool)) {
    let check = if ok { "ok" } else { "FAIL" };
    TABLE.row(&[call.into(), stream.into(), pow2(log_n), median.into(), mean.into(), check.into()]);
}

/// Where a value call's time goes (default stream, Auto): the same sum enqueued into a device
/// buffer then a stream sync (no copy); written by the kernel straight into page-locked host
/// memory through its unified address (no copy engine); and a sync of the idle stream.
fn breakdown(s: &GpuStream, x: &DeviceBuffer<f32>, want: f32, log_n: usize) -> Result<()> {
    const CALLS: usize = 2000;
    let mut dev_out = DeviceBuffer::<f32>::zeroed(1).map_err(Error::cuda("cuMemAlloc"))?;
    let into_sync = per_call_us(100, CALLS, || {
        s.reduce_sum_into(x, &mut dev_out, ReduceStrategy::Auto)?;
        s.synchronize()?;
        Ok(true)
    })?;
    let pinned = LockedBuffer::new(&f32::NAN, 1).map_err(Error::cuda("cuMemAllocHost"))?;
    // SAFETY: with unified addressing, cuMemAllocHost memory is device-accessible at its host
    // address; the slot outlives every call below, each waited for before the read.
    let mut slot = unsafe { DeviceSlice::from_raw_parts_mut(DevicePointer::from_raw(pinned.as_ptr() as u64), 1) };
    let mapped = per_call_us(100, CALLS, || {
        s.reduce_sum_into(x, &mut slot, ReduceStrategy::Auto)?;
        s.synchronize()?;
        // SAFETY: the kernel's write is complete after the stream sync; volatile, as the device wrote it.
        Ok(unsafe { std::ptr::read_volatile(pinned.as_ptr()) } == want)
    })?;
    let sync_only = per_call_us(100, CALLS, || s.synchronize().map(|_| true))?;
    row("reduce_sum_into + synchronize (no copy)", "default", log_n, into_sync);
    row("reduce_sum_into the pinned slot, mapped (no copy engine)", "default", log_n, mapped);
    row("synchronize of the idle stream", "default", log_n, sync_only);
    Ok(())
}

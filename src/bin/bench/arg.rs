//! The arg reductions: argmin, argmax and argminmax on every element type, 2^28 bytes per input,
//! cold (inputs rotated past L2), against the 1 GiB copy; then the LLM sampling case, argmax of
//! 128,256 bf16 logits returned to the host (value call, host clock per call). Peers in the same
//! run: `native_peers` section arg (CUB ArgMax/ArgMin, and ArgMax + pinned copy + stream sync)
//! and `torch_peers.py` section argmax.
use crate::harness::{
    buffers, for_every_type, per_call_us, rotation, same_size_bw,
    Fmt::{Fixed, Percent, Text},
    Pattern, Table, BYTES, REPS, WARMUP,
};
use crate::timing::{gbps, median_ms};
use cudakernels::cust::memory::DeviceBuffer;
use cudakernels::{bf16, ArgOp, Error, Gpu, GpuStream, Result, ValueIndex};

/// Logits of a Llama 3 vocabulary.
const VOCAB: usize = 128_256;
/// Timed value calls of the latency rows.
const VALUE_CALLS: usize = 5000;

const TABLE: Table = Table::markdown(
    "| type | op | median µs | GB/s | % of copy | % of same-size copy |",
    &[Text, Text, Fixed(1), Fixed(0), Percent(1), Percent(1)],
);
const LATENCY: Table =
    Table::markdown("| call | n | median µs | mean µs | check |", &[Text, Text, Fixed(2), Fixed(2), Text]);

pub fn run(gpu: &Gpu, copy_bw: f64) -> Result<()> {
    let s = gpu.default_stream();
    println!("### Arg reductions, 2^28 bytes per input (cold: rotated)\n");
    let copy_bw = (copy_bw, same_size_bw(s)?);
    TABLE.header();
    for_every_type!(rows(s, copy_bw));
    println!();
    latency(gpu)
}

/// Every arg op on element type `T` over its [`Pattern`], results to device memory; `copy_bw`
/// = (1 GiB copy, same-size copy).
fn rows<T: Pattern>(s: &GpuStream, copy_bw: (f64, f64)) -> Result<()> {
    let n = BYTES / std::mem::size_of::<T>();
    let bufs = buffers(rotation(s, BYTES), n, T::pattern)?;
    let mut values = buffers(1, 2, |_| T::default())?;
    let mut indices = buffers(1, 2, |_| 0u64)?;
    for &op in ArgOp::ALL.iter() {
        let ms =
            median_ms(s, WARMUP, REPS, |i| s.arg_into(op, &bufs[i % bufs.len()], &mut values[0], &mut indices[0]))?;
        let bw = gbps(BYTES, ms);
        let (all, same) = (100.0 * bw / copy_bw.0, 100.0 * bw / copy_bw.1);
        TABLE.row(&[T::NAME.into(), op.name().into(), (ms * 1e3).into(), bw.into(), all.into(), same.into()]);
    }
    Ok(())
}

/// argmax of `VOCAB` logits to the host, bf16 and f32, on one input (in L2, as in a decode
/// loop), host clock per call; the unique max sits at a fixed place near the end.
fn latency(gpu: &Gpu) -> Result<()> {
    println!("### argmax of {} logits to the host (host clock per call, median and mean of {})\n", VOCAB, VALUE_CALLS);
    LATENCY.header();
    let s = gpu.default_stream();
    let at = VOCAB - 1000;
    let logit = |i: usize| if i == at { 30.0 } else { ((i * 7919) % 2000) as f32 / 100.0 - 10.0 };
    let halves: Vec<bf16> = (0..VOCAB).map(|i| bf16::from_f32(logit(i))).collect();
    let x = DeviceBuffer::from_slice(&halves).map_err(Error::cuda("cuMemcpyHtoD"))?;
    let want = ValueIndex { value: bf16::from_f32(30.0), index: at as u64 };
    let (median, mean, ok) = per_call_us(100, VALUE_CALLS, || Ok(s.argmax(&x)? == want))?;
    row("argmax bf16", median, mean, ok);
    let floats: Vec<f32> = (0..VOCAB).map(logit).collect();
    let x = DeviceBuffer::from_slice(&floats).map_err(Error::cuda("cuMemcpyHtoD"))?;
    let want = ValueIndex { value: 30.0f32, index: at as u64 };
    let (median, mean, ok) = per_call_us(100, VALUE_CALLS, || Ok(s.argmax(&x)? == want))?;
    row("argmax f32", median, mean, ok);
    println!();
    Ok(())
}

fn row(call: &str, median: f64, mean: f64, ok: bool) {
    let check = if ok { "ok" } else { "FAIL" };
    LATENCY.row(&[call.into(), VOCAB.into(), median.into(), mean.into(), check.into()]);
}

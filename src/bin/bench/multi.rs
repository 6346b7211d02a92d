//! Several GPUs: a sharded f32 sum (2^28 per GPU) and a row-sharded sgemv (m = 2^20 per GPU,
//! n = 128), on GPU 0 alone and on every GPU, on the host clock: aggregate GB/s against one
//! GPU's 1 GiB copy per GPU, scaling against GPU 0 alone, and the parts alone (the join with
//! 1-element shards, the NCCL broadcast of x, the sgemvs with x in place).
use crate::harness::{
    batch_us, per_call_us,
    Fmt::{Fixed, Percent, Text, Times},
    Table, Val, BATCH_CALLS,
};
use crate::timing::gbps;
use cudakernels::cust::memory::{DeviceBuffer, DeviceSlice};
use cudakernels::{multi, Gpu, Result, RowShard, SgemvOptions};

const TABLE: Table = Table::markdown(
    "| what | GPUs | per GPU | µs | aggregate GB/s | % of one GPU's copy × GPUs | scaling |",
    &[Text, Text, Text, Fixed(1), Fixed(0), Percent(1), Times(2)],
);

/// The sgemv's rows and columns per GPU, as the table labels them.
const ROWS: usize = 1 << 20;
const COLS: usize = 128;
const SGEMV_PER_GPU: &str = "m = 2^20, n = 128";

/// µs per call on GPU 0 alone, the base of each row's scaling.
#[derive(Default)]
struct OneGpu {
    sum: f64,
    sgemv: f64,
    sgemv_batch: f64,
}

pub fn run(_gpu: &Gpu, copy_bw: f64) -> Result<()> {
    let all = cudakernels::open_all()?;
    let ranks = all.ranks();
    println!("### several GPUs: {} visible, NCCL {} (host clock, median of 20)\n", ranks, all.nccl_version());
    TABLE.header();
    drop(all);
    let counts: Vec<usize> = if ranks > 1 { vec![1, ranks] } else { vec![1] };
    let mut one = OneGpu::default();
    for &k in counts.iter() {
        let m = cudakernels::open_devices(&(0..k as u32).collect::<Vec<_>>())?;
        sum_rows(&m, copy_bw, &mut one)?;
        sgemv_rows(&m, copy_bw, &mut one)?;
    }
    println!();
    Ok(())
}

/// A throughput row of `k` GPUs: `bytes` in `us`, scaling against `base` µs on one GPU (set
/// from this row when k = 1).
fn throughput(what: String, k: usize, per_gpu: &str, us: f64, bytes: usize, copy_bw: f64, base: &mut f64) -> Vec<Val> {
    if k == 1 {
        *base = us;
    }
    let bw = gbps(bytes, us / 1e3);
    vec![
        what.into(),
        k.into(),
        per_gpu.into(),
        us.into(),
        bw.into(),
        (100.0 * bw / (copy_bw * k as f64)).into(),
        (*base * k as f64 / us).into(),
    ]
}

/// A row of a part timed alone: no throughput, scaling only where given.
fn part(what: String, k: usize, per_gpu: &str, us: f64, scaling: Option<f64>) {
    TABLE.row(&[
        what.into(),
        k.into(),
        per_gpu.into(),
        us.into(),
        Val::Blank,
        Val::Blank,
        scaling.map_or(Val::Blank, Val::from),
    ]);
}

/// The sharded sum, checked, and the join alone.
fn sum_rows(m: &multi::MultiGpu, copy_bw: f64, one: &mut OneGpu) -> Result<()> {
    let k = m.ranks();
    let n = 1usize << 28;
    let host: Vec<f32> = (0..n).map(|i| (i % 13) as f32 - 6.0).collect();
    // Small integers: every partial sum is exact in f32, so the result is too.
    let want = k as f64 * host.iter().map(|&v| v as f64).sum::<f64>();
    let shards: Vec<_> = m.gpus().iter().map(|g| multi::upload(g, &host)).collect::<Result<_>>()?;
    drop(host);
    let views: Vec<&DeviceSlice<f32>> = shards.iter().map(|b| b.as_slice()).collect();
    let (us, _, ok) = per_call_us(2, 20, || Ok(m.reduce_sum(&views)?.iter().all(|&v| v as f64 == want)))?;
    let vals = throughput("f32 sum, Auto + join".into(), k, "2^28", us, 4 * n * k, copy_bw, &mut one.sum);
    println!("{}{}", TABLE.md_row(&vals), if ok { "" } else { " WRONG" });
    drop(views);
    drop(shards);
    let ones: Vec<_> = m.gpus().iter().map(|g| multi::upload(g, &[1.0f32])).collect::<Result<_>>()?;
    let views: Vec<&DeviceSlice<f32>> = ones.iter().map(|b| b.as_slice()).collect();
    let us = per_call_us(2, 200, || m.reduce_sum(&views).map(|_| true))?.0;
    part("join alone (1-element shards)".into(), k, "1", us, None);
    Ok(())
}

/// The row-sharded sgemv one call at a time and back to back, then its two parts alone.
fn sgemv_rows(m: &multi::MultiGpu, copy_bw: f64, one: &mut OneGpu) -> Result<()> {
    let k = m.ranks();
    let a_host: Vec<f32> = (0..ROWS * COLS).map(|i| ((i % 7) as f32 - 3.0) * 0.25).collect();
    let x_host: Vec<f32> = (0..COLS).map(|i| (i % 5) as f32 - 2.0).collect();
    let a: Vec<_> = m.gpus().iter().map(|g| multi::upload(g, &a_host)).collect::<Result<_>>()?;
    drop(a_host);
    let mut xs: Vec<_> = m.gpus().iter().map(|g| multi::upload(g, &x_host)).collect::<Result<_>>()?;
    let mut ys: Vec<_> = m.gpus().iter().map(|g| multi::upload(g, &vec![0f32; ROWS])).collect::<Result<_>>()?;
    sharded(m, copy_bw, one, &a, &mut xs, &mut ys)?;
    let us = per_call_us(2, 200, || {
        let mut views: Vec<&mut DeviceSlice<f32>> = xs.iter_mut().map(|x| &mut **x).collect();
        m.broadcast(0, &mut views)?;
        m.synchronize().map(|_| true)
    })?
    .0;
    part(format!("x broadcast alone (NCCL, {} floats)", COLS), k, "", us, None);
    let us = per_call_us(2, 20, || {
        for r in 0..k {
            m.gpus()[r].default_stream().sgemv(ROWS, COLS, &a[r], &xs[r], &mut ys[r], SgemvOptions::default())?;
        }
        m.synchronize().map(|_| true)
    })?
    .0;
    part("sgemvs alone (x in place)".into(), k, SGEMV_PER_GPU, us, Some(one.sgemv * k as f64 / us));
    Ok(())
}

/// `MultiGpu::sgemv_rows` one call at a time, then `BATCH_CALLS` back to back with one
/// synchronize per batch: the GPUs' throughput without the host's per-call launch and wait
/// (how nccl-tests times collectives).
fn sharded(
    m: &multi::MultiGpu,
    copy_bw: f64,
    one: &mut OneGpu,
    a: &[DeviceBuffer<f32>],
    xs: &mut [DeviceBuffer<f32>],
    ys: &mut [DeviceBuffer<f32>],
) -> Result<()> {
    let k = m.ranks();
    let mut shards: Vec<RowShard> = a
        .iter()
        .zip(xs.iter_mut())
        .zip(ys.iter_mut())
        .map(|((a, x), y)| RowShard { rows: ROWS, a: a.as_slice(), x, y })
        .collect();
    let bytes = 4 * (ROWS * COLS + ROWS + COLS) * k;
    let us = per_call_us(2, 20, || {
        m.sgemv_rows(COLS, &mut shards, SgemvOptions::default())?;
        m.synchronize().map(|_| true)
    })?
    .0;
    let what = "sgemv rows (x broadcast + Auto)".to_string();
    TABLE.row(&throughput(what, k, SGEMV_PER_GPU, us, bytes, copy_bw, &mut one.sgemv));
    let us = batch_us(m, || m.sgemv_rows(COLS, &mut shards, SgemvOptions::default()))?;
    let what = format!("sgemv rows, {} calls back to back", BATCH_CALLS);
    TABLE.row(&throughput(what, k, SGEMV_PER_GPU, us, bytes, copy_bw, &mut one.sgemv_batch));
    Ok(())
}

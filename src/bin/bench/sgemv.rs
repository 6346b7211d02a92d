//! sgemv y = A·x (Op::N) on narrow shapes, Auto and every kernel that takes them, hot and cold
//! (A rotated past L2), against the 1 GiB copy and a cold copy of the same bytes; first the
//! launch floor of a 1×1 problem against a bare cuLaunchKernel of the same kernel.
use crate::harness::{
    a_rotation, buffers, launch, same_size_copy_ms, x_value,
    Fmt::{Fixed, Percent, Text},
    RawSgemv, Table, Val, REPS, WARMUP,
};
use crate::timing::{gbps, host_us, median_ms, pipelined_ms};
use cudakernels::cust::module::Module;
use cudakernels::{Error, Gpu, GpuStream, Op, RawSlice, Result, SgemvCall, SgemvKernel, SgemvOptions};

const TABLE: Table = Table::markdown(
    "| m | n | kernel | hot µs | hot GB/s | cold µs | cold GB/s | cold % of copy | cold pipelined µs | host µs |",
    &[Text, Text, Text, Fixed(1), Fixed(0), Fixed(1), Fixed(0), Percent(1), Fixed(1), Fixed(1)],
);

pub fn run(gpu: &Gpu, copy_bw: f64) -> Result<()> {
    let s = gpu.default_stream();
    println!("### sgemv y = A·x, A row-major m×n\n");
    launch_floor(s)?;
    println!("`% of copy`: of the 1 GiB copy above. `same-size copy`: a cold device-to-device copy moving as many");
    println!("bytes (read + write) as the sgemv, timed the same way, shown once per shape.\n");
    TABLE.header();
    for &m in [16384usize, 1 << 20].iter() {
        for &n in [16usize, 32, 97, 128].iter() {
            one_shape(s, copy_bw, m, n)?;
        }
    }
    println!();
    Ok(())
}

/// m = n = 1 through `Gpu::sgemv` and through cust alone (what the driver costs without this
/// library's checks), on the GPU and on the host.
fn launch_floor(s: &GpuStream) -> Result<()> {
    let (a1, x1) = (buffers(1, 1, |_| 1.0f32)?, buffers(1, 1, |_| 1.0f32)?);
    let mut y1 = buffers(1, 1, |_| 0.0f32)?;
    let mut tiny = |_| s.sgemv(1, 1, &a1[0], &x1[0], &mut y1[0], SgemvOptions::default());
    let (floor, floor_host) = (median_ms(s, WARMUP, REPS, &mut tiny)?, host_us(s, &mut tiny)?);
    let module = Module::from_ptx(cudakernels::PTX, &[]).map_err(Error::cuda("cuModuleLoadData"))?;
    let f = module.get_function("sgemv_rows8").map_err(Error::cuda("cuModuleGetFunction"))?;
    let raw = RawSgemv {
        a: a1[0].as_device_ptr().as_raw(),
        a_len: 1,
        x: x1[0].as_device_ptr().as_raw(),
        x_len: 1,
        m: 1,
        n: 1,
        lda: 1,
        alpha: 1.0,
        beta: 0.0,
        y: y1[0].as_device_ptr().as_raw(),
        extra: Vec::new(),
        scratch: None,
    };
    let params = raw.params();
    // SAFETY: sgemv_rows8's ten parameters in order, for a 1×1 problem on live buffers.
    let mut bare = |_| unsafe { launch(s.stream().unwrap(), &f, 1, 32, &params) };
    let (raw_ms, raw_host) = (median_ms(s, WARMUP, REPS, &mut bare)?, host_us(s, &mut bare)?);
    println!("Launch floor, m = n = 1 (one event pair per call): Gpu::sgemv {:.1} µs ({:.1} µs on the host), bare cuLaunchKernel of the same kernel {:.1} µs ({:.1} µs on the host)\n",
        floor * 1e3, floor_host, raw_ms * 1e3, raw_host);
    Ok(())
}

/// The same-size copy, then Auto and every kernel that takes m × n.
fn one_shape(s: &GpuStream, copy_bw: f64, m: usize, n: usize) -> Result<()> {
    let bytes = 4 * (m * n + n + m);
    let a = a_rotation(s, m * n)?;
    let x = buffers(1, n, x_value)?;
    let mut y = buffers(1, m, |_| 0.0f32)?;
    let same_size = same_size_copy_ms(s, &a, m * n, bytes)?;
    let copy_label = format!("same-size copy ({} MB)", bytes / 2 / 1000000);
    let blank = || Val::Blank;
    TABLE.row(&[
        m.into(),
        n.into(),
        copy_label.into(),
        blank(),
        blank(),
        (same_size * 1e3).into(),
        gbps(bytes, same_size).into(),
        (100.0 * gbps(bytes, same_size) / copy_bw).into(),
        blank(),
        blank(),
    ]);
    let (a_raw, x_raw, y_raw) = (RawSlice::of(&a[0]), RawSlice::of(&x[0]), RawSlice::of(&y[0]));
    let shape = SgemvCall { op: Op::N, m, n, lda: n, a: a_raw, x: x_raw, y: y_raw }.validate()?;
    let kernels = std::iter::once(SgemvKernel::Auto).chain(SgemvKernel::explicit().filter(|&k| shape.check(k).is_ok()));
    for kernel in kernels {
        let opts = SgemvOptions { kernel, ..SgemvOptions::default() };
        let hot = median_ms(s, WARMUP, REPS, |_| s.sgemv(m, n, &a[0], &x[0], &mut y[0], opts))?;
        let mut cold_call = |i: usize| s.sgemv(m, n, &a[i % a.len()], &x[0], &mut y[0], opts);
        let cold = median_ms(s, WARMUP, REPS, &mut cold_call)?;
        let piped = pipelined_ms(s, &mut cold_call)?;
        let host = host_us(s, &mut cold_call)?;
        let name = match kernel {
            SgemvKernel::Auto => format!("**Auto = {:?}**", shape.auto_kernel()),
            k => format!("{:?}", k),
        };
        TABLE.row(&[
            m.into(),
            n.into(),
            name.into(),
            (hot * 1e3).into(),
            gbps(bytes, hot).into(),
            (cold * 1e3).into(),
            gbps(bytes, cold).into(),
            (100.0 * gbps(bytes, cold) / copy_bw).into(),
            (piped * 1e3).into(),
            host.into(),
        ]);
    }
    Ok(())
}

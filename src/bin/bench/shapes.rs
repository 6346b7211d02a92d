//! sgemv Auto on the shapes and awkward views (set `bench` of data/sgemv_shapes.csv),
//! both ops: cold (A rotated past L2), queued back to back and hot, against the 1 GiB copy and a
//! cold copy of the same bytes. The peers time the same shapes: cuBLAS in `native_peers`,
//! torch.mv in `torch_peers.py`.
use crate::harness::{
    a_rotation, buffers, same_size_copy_ms, x_value, Csv,
    Fmt::{Fixed, Percent, Skip, Text},
    Table, REPS, WARMUP,
};
use crate::sgemv_shapes::{self, Case};
use crate::timing::{gbps, median_ms, pipelined_ms};
use cudakernels::cust::memory::DeviceBuffer;
use cudakernels::{Gpu, GpuStream, Op, RawSlice, Result, SgemvCall, SgemvOptions};

const TABLE: Table = Table {
    header: "| m | n | lda | offsets | op | Auto kernel | splits | cold µs | cold pipelined µs | hot µs | GB/s | % of 1 GiB copy | copy µs | % of same-size copy |",
    fmts: &[
        Text, Text, Text, Skip, Skip, Text, Text, Text, Text, Fixed(1), Fixed(1), Fixed(1), Fixed(0), Percent(1),
        Fixed(1), Percent(1),
    ],
    csv: Some(Csv {
        file: "sgemv_ours.csv",
        header: "m,n,lda,a_off,x_off,op,kernel,cold_us,pipelined_us,hot_us,gbps,copy_us",
        fmts: &[
            Text, Text, Text, Text, Text, Skip, Text, Text, Skip, Fixed(2), Fixed(2), Fixed(2), Fixed(1), Skip, Fixed(2),
            Skip,
        ],
    }),
};

pub fn run(gpu: &Gpu, copy_bw: f64) -> Result<()> {
    let s = gpu.default_stream();
    println!("### sgemv Auto on the issue's shapes, both ops (cold: A rotated past L2; x and y one buffer)\n");
    println!("`GB/s` counts A, x and y once. `copy µs`: a cold device-to-device copy of as many bytes (read + write), timed the same way.\n");
    TABLE.header();
    for case in sgemv_shapes::in_set("bench") {
        let a = a_rotation(s, case.a_len())?;
        let copy = same_size_copy_ms(s, &a, case.a_len(), 4 * (case.m * case.n + case.m + case.n))?;
        for &op in [Op::N, Op::T].iter() {
            one_op(s, copy_bw, &case, &a, copy, op)?;
        }
    }
    println!();
    Ok(())
}

/// Auto for `op` on `case`, A from the rotated `a`; `copy` ms of the same-size copy.
fn one_op(s: &GpuStream, copy_bw: f64, case: &Case, a: &[DeviceBuffer<f32>], copy: f64, op: Op) -> Result<()> {
    let Case { m, n, a_offset: a_off, x_offset: x_off, .. } = *case;
    let lda = case.lda();
    let bytes = 4 * (m * n + m + n);
    let (x_len, y_len) = if op == Op::N { (n, m) } else { (m, n) };
    let x = buffers(1, x_off + x_len, x_value)?;
    let mut y = buffers(1, y_len, |_| 0.0f32)?;
    let xv = x[0].index(x_off..);
    let opts = SgemvOptions { lda: Some(lda), op, ..SgemvOptions::default() };
    let (a_raw, x_raw, y_raw) = (RawSlice::of(&a[0].index(a_off..)), RawSlice::of(&xv), RawSlice::of(&y[0]));
    let shape = SgemvCall { op, m, n, lda, a: a_raw, x: x_raw, y: y_raw }.validate()?;
    let kernel = s.sgemv_auto(&shape)?;
    let splits = s.sgemv_plan(kernel, &shape)?.splits;
    let mut cold_call = |i: usize| s.sgemv(m, n, &a[i % a.len()].index(a_off..), &xv, &mut y[0], opts);
    let cold = median_ms(s, WARMUP, REPS, &mut cold_call)?;
    let piped = pipelined_ms(s, &mut cold_call)?;
    let hot = median_ms(s, WARMUP, REPS, |_| s.sgemv(m, n, &a[0].index(a_off..), &xv, &mut y[0], opts))?;
    let bw = gbps(bytes, cold);
    TABLE.row(&[
        m.into(),
        n.into(),
        lda.into(),
        a_off.into(),
        x_off.into(),
        format!("({}, {})", a_off, x_off).into(),
        (if op == Op::N { "N" } else { "T" }).into(),
        format!("{:?}", kernel).into(),
        splits.into(),
        (cold * 1e3).into(),
        (piped * 1e3).into(),
        (hot * 1e3).into(),
        bw.into(),
        (100.0 * bw / copy_bw).into(),
        (copy * 1e3).into(),
        (100.0 * copy / cold).into(),
    ]);
    Ok(())
}

//! sgemv launch plans around the ones `plan()` picks, launched raw from the module the handle
//! loaded, on the shapes where Auto trails cuBLAS or a same-size copy: wide rows by rows per
//! block, split-K by waves, transposed by lanes per row and blocks per SM (sets `plan-n` and
//! `plan-t` of data/sgemv_shapes.csv; x at offset 0). Cold (A rotated), against the 1 GiB copy.
use crate::harness::{
    a_rotation, buffers, launch, x_value,
    Fmt::{Fixed, Percent, Text},
    RawSgemv, Table, REPS, WARMUP,
};
use crate::sgemv_shapes::{self, Case};
use crate::timing::{gbps, median_ms};
use cudakernels::config::{SGEMV_SPLIT_BLOCK, SGEMV_T_BLOCK, SGEMV_WIDE_TILE, VECTOR_UNROLL, WARP_SIZE};
use cudakernels::cust::module::Module;
use cudakernels::{sgemv_t_striped, stripe_depths};
use cudakernels::{Error, Gpu, GpuStream, LoadedImage, Occupancy, Op, Result, SgemvKernel, SgemvPlan, SgemvShape};

const TABLE: Table = Table::markdown(
    "| m | n | lda | op | kernel | args | grid | cold µs | GB/s | % of 1 GiB copy |",
    &[Text, Text, Text, Text, Text, Text, Text, Fixed(1), Fixed(0), Percent(1)],
);

/// One raw launch: a kernel's entry point, the sizes it takes after the ten common parameters,
/// and its grid.
struct Launch {
    kernel: SgemvKernel,
    extra: Vec<usize>,
    grid: usize,
}

impl Launch {
    /// The library's own plan for `kernel`: the one place that reads an [`SgemvPlan`].
    fn planned(kernel: SgemvKernel, plan: SgemvPlan) -> Launch {
        Launch { kernel, extra: plan.extra.values(), grid: plan.grid as usize }
    }
}

pub fn run(gpu: &Gpu, copy_bw: f64) -> Result<()> {
    let s = gpu.default_stream();
    let module = match s.image() {
        LoadedImage::Cubin { sm } => Module::from_cubin(cudakernels::IMAGES.cubin(sm).expect("cubin"), &[]),
        LoadedImage::Ptx => Module::from_ptx(cudakernels::PTX, &[]),
    }
    .map_err(Error::cuda("cuModuleLoadData"))?;
    println!("### sgemv launch plans (raw launches, cold)\n");
    TABLE.header();
    for (op, set) in [(Op::N, "plan-n"), (Op::T, "plan-t")] {
        for case in sgemv_shapes::in_set(set) {
            let (m, n, a_off) = (case.m, case.n, case.a_offset);
            let shape = SgemvShape { op, m, n, lda: case.lda(), a_addr: 4 * a_off as u64, x_addr: 0 };
            let launches = match op {
                Op::N => row_launches(s, m, n),
                Op::T => transposed_launches(s, &module, &shape)?,
            };
            time_launches(s, &module, copy_bw, &case, op, launches)?;
        }
    }
    println!();
    Ok(())
}

/// Op::N: wide rows by rows per block, split-K by waves of the device.
fn row_launches(s: &GpuStream, m: usize, n: usize) -> Vec<Launch> {
    let mut launches = Vec::new();
    let tiles = (n + SGEMV_WIDE_TILE - 1) / SGEMV_WIDE_TILE;
    for &rows in [4usize, 8, 12, 16, 24, 32].iter().filter(|&&r| r < m + 4) {
        launches.push(Launch { kernel: SgemvKernel::WideVec4, extra: vec![rows], grid: (m + rows - 1) / rows * tiles });
    }
    for &waves in [1usize, 2, 4].iter() {
        let target = waves * (s.max_threads_per_sm() / SGEMV_SPLIT_BLOCK) as usize * s.sm_count() as usize;
        let min_chunk = 4 * (VECTOR_UNROLL * SGEMV_SPLIT_BLOCK) as usize;
        let splits = (target / m).clamp(1, (n / min_chunk).max(1));
        let chunk = ((n + splits - 1) / splits + 3) / 4 * 4;
        let splits = (n + chunk - 1) / chunk;
        launches.push(Launch { kernel: SgemvKernel::SplitKVec4, extra: vec![chunk], grid: m * splits });
    }
    launches
}

/// The resident blocks of an Op::T `kernel` (blocks of `SGEMV_T_BLOCK`) on `sms` SMs.
fn t_occupancy(module: &Module, kernel: SgemvKernel, sms: usize) -> Result<Occupancy> {
    let f = module.get_function(kernel.entry_point()).map_err(Error::cuda("cuModuleGetFunction"))?;
    let per_sm = f
        .max_active_blocks_per_multiprocessor(SGEMV_T_BLOCK.into(), 0)
        .map_err(Error::cuda("cuOccupancyMaxActiveBlocksPerMultiprocessor"))?;
    Ok(Occupancy { sm_count: sms as u32, threads_per_sm: per_sm * SGEMV_T_BLOCK })
}

/// Op::T: the plan `TVec4` / `TScalar` get with the blocks the device keeps resident (where
/// `Auto` does not take stripes, also the plan it would give the deepest striped kernel), then the
/// striped kernels at every depth over 1 to 4 row splits (and the tile shift), and where the
/// column tiles are few, splits that fill the device once, twice or four times.
fn transposed_launches(s: &GpuStream, module: &Module, shape: &SgemvShape) -> Result<Vec<Launch>> {
    let (m, n, sms) = (shape.m, shape.n, s.sm_count() as usize);
    let old = if shape.lda == n && shape.a_addr == 0 && n % 4 == 0 { SgemvKernel::TVec4 } else { SgemvKernel::TScalar };
    let mut launches = vec![Launch::planned(old, SgemvPlan::new(old, shape, t_occupancy(module, old, sms)?)?)];
    if !sgemv_t_striped(n) {
        // What `Auto` would launch with the striped kernels from fewer columns: the deepest
        // depth, planned with its own occupancy (its plan keeps a warp's depth of rows per split).
        let deepest = SgemvKernel::TStripes(stripe_depths().last().expect("TStripes is built"));
        launches.push(Launch::planned(deepest, SgemvPlan::new(deepest, shape, t_occupancy(module, deepest, sms)?)?));
    }
    // Striped: 32-column tiles × 1 to 4 row splits, at every depth.
    let tiles = (n + WARP_SIZE as usize - 1) / WARP_SIZE as usize;
    let striped = |rows_per_split: usize, shift: usize, grid: usize, depth: u32| Launch {
        kernel: SgemvKernel::TStripes(depth),
        extra: vec![rows_per_split, shift],
        grid,
    };
    for depth in stripe_depths() {
        for &splits in [1usize, 2, 3, 4].iter().filter(|&&k| 2 * tiles * k >= sms && tiles * k <= 6 * sms) {
            let rows_per_split = (m + splits - 1) / splits;
            launches.push(striped(rows_per_split, 0, tiles * splits, depth));
            if shape.stripes_shift() > 0 && splits == 1 {
                // The same with the tiles shifted onto aligned lines.
                launches.push(striped(rows_per_split, shape.stripes_shift(), shape.stripes_tiles(), depth));
            }
        }
    }
    if tiles < sms {
        // Few tiles: splits to fill the device one, two or four times, at every depth.
        for depth in stripe_depths() {
            for &per_sm in [1usize, 2, 4].iter() {
                let splits = (per_sm * sms / tiles).max(1);
                launches.push(striped((m + splits - 1) / splits, 0, tiles * splits, depth));
            }
        }
    }
    Ok(launches)
}

/// Times each of `launches` on `case` for `op` (A rotated; x, y, partials and counters one
/// buffer each, sized for every plan) and prints its row.
fn time_launches(
    s: &GpuStream,
    module: &Module,
    copy_bw: f64,
    case: &Case,
    op: Op,
    launches: Vec<Launch>,
) -> Result<()> {
    let (m, n, lda, a_off, a_len) = (case.m, case.n, case.lda(), case.a_offset, case.a_len());
    let a = a_rotation(s, a_len)?;
    let (x_len, y_len) = if op == Op::N { (n, m) } else { (m, n) };
    let x = buffers(1, x_len, x_value)?;
    let y = buffers(1, y_len, |_| 0.0f32)?;
    let partials = buffers(1, 64 * y_len.max(m * ((n + 1023) / 1024)), |_| 0.0f32)?;
    let counters = buffers(1, y_len.max(m), |_| 0u32)?;
    let bytes = 4 * (m * n + m + n);
    for Launch { kernel, extra, grid } in launches {
        let entry = kernel.entry_point();
        let f = module.get_function(entry).map_err(Error::cuda("cuModuleGetFunction"))?;
        let mut raw = RawSgemv {
            a: 0,
            a_len: a_len - a_off,
            x: x[0].as_device_ptr().as_raw(),
            x_len,
            m,
            n,
            lda,
            alpha: 1.0,
            beta: 0.0,
            y: y[0].as_device_ptr().as_raw(),
            extra: extra.clone(),
            scratch: Some((partials[0].as_device_ptr().as_raw(), counters[0].as_device_ptr().as_raw())),
        };
        let ms = median_ms(s, WARMUP, REPS, |i| {
            raw.a = a[i % a.len()].as_device_ptr().as_raw() + 4 * a_off as u64;
            // SAFETY: the entry's parameters in order; partials and counters sized for every
            // plan above (counters zeroed, left zeroed by the kernel).
            unsafe { launch(s.stream().unwrap(), &f, grid as u32, kernel.block(), &raw.params()) }
        })?;
        let bw = gbps(bytes, ms);
        TABLE.row(&[
            m.into(),
            n.into(),
            lda.into(),
            format!("{:?}", op).into(),
            entry.into(),
            format!("{:?}", extra).into(),
            grid.into(),
            (ms * 1e3).into(),
            bw.into(),
            (100.0 * bw / copy_bw).into(),
        ]);
    }
    Ok(())
}

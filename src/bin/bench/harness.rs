//! What every section shares: repetitions, inputs rotated past L2, the copy reference, host-clock
//! timing, raw sgemv launches, and the table type that prints a markdown row and appends the
//! same fields as a CSV row.
use crate::timing::{gbps, median_ms};
use cudakernels::cust::function::Function;
use cudakernels::cust::memory::{AsyncCopyDestination, DeviceBuffer, DeviceCopy};
use cudakernels::cust::stream::Stream;
use cudakernels::{multi, Error, Finish, GpuStream, Result};
use std::ffi::c_void;
use std::io::Write;

/// Timed repetitions and untimed warm-up runs of [`median_ms`] in every section.
pub const REPS: usize = 30;
pub const WARMUP: usize = 5;

/// An element type of the typed and arg sections with its input: element `i` of a repeating
/// pattern (integers spread over the type's range, floats in ±250 in steps of 0.5).
pub trait Pattern: cudakernels::TypedElement {
    fn pattern(i: usize) -> Self;
}
macro_rules! pattern {
    ($($t:ty => |$i:ident| $e:expr;)*) => {$(
        impl Pattern for $t {
            fn pattern($i: usize) -> Self { $e }
        }
    )*};
}
pattern! {
    u8 => |i| (i * 31 % 251) as u8;
    i8 => |i| (i * 31 % 251) as i8;
    u16 => |i| (i * 31 % 65521) as u16;
    i16 => |i| (i * 31 % 65521) as i16;
    i32 => |i| (i as i32).wrapping_mul(2654435761u32 as i32);
    u32 => |i| (i as u32).wrapping_mul(2654435761);
    f32 => |i| (i % 1000) as f32 * 0.5 - 250.0;
    f64 => |i| (i % 1000) as f64 * 0.5 - 250.0;
    cudakernels::f16 => |i| cudakernels::f16::from_f32(f32::pattern(i));
    cudakernels::bf16 => |i| cudakernels::bf16::from_f32(f32::pattern(i));
}

/// Element `i` of the axis sections' inputs: uniform in [0, 1) (24 bits of a SplitMix64 hash of
/// `i`), the distribution `torch.rand` draws the torch peers' from, and the same values
/// `native_peers`' axis section fills CUB's with. Arg walks that track a running extreme move
/// about as often on these as on any random input.
pub fn axis_value(i: usize) -> f32 {
    let mut z = (i as u64).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    ((z ^ (z >> 31)) >> 40) as f32 / (1u32 << 24) as f32
}

/// `$rows::<T>(args)?` for every [`Pattern`] type, in the typed reductions' order.
macro_rules! for_every_type {
    ($rows:ident($($arg:expr),*)) => {
        $rows::<u8>($($arg),*)?;
        $rows::<i8>($($arg),*)?;
        $rows::<u16>($($arg),*)?;
        $rows::<i16>($($arg),*)?;
        $rows::<i32>($($arg),*)?;
        $rows::<u32>($($arg),*)?;
        $rows::<f32>($($arg),*)?;
        $rows::<f64>($($arg),*)?;
        $rows::<cudakernels::f16>($($arg),*)?;
        $rows::<cudakernels::bf16>($($arg),*)?;
    };
}
pub(crate) use for_every_type;

/// Sum inputs: small integers, so every summation order gives the exact sum.
pub fn small_int(i: usize) -> f32 {
    (i % 7) as f32 - 3.0
}

/// sgemv's A: multiples of 1/8 in [-0.75, 0.75].
pub fn a_value(i: usize) -> f32 {
    ((i % 13) as f32 - 6.0) * 0.125
}

/// sgemv's x: multiples of 1/4 in [0, 1].
pub fn x_value(i: usize) -> f32 {
    (i % 5) as f32 * 0.25
}

/// Enough buffers of `bytes` each that rotating through them misses L2 (4× its size).
pub fn rotation(gpu: &GpuStream, bytes: usize) -> usize {
    ((4 * gpu.l2_bytes() + bytes - 1) / bytes).max(2)
}

/// `count` device buffers of `n` elements, element i = `fill(i)`.
pub fn buffers<T: DeviceCopy + Copy>(
    count: usize,
    n: usize,
    fill: impl Fn(usize) -> T,
) -> Result<Vec<DeviceBuffer<T>>> {
    let host: Vec<T> = (0..n).map(&fill).collect();
    (0..count).map(|_| DeviceBuffer::from_slice(&host).map_err(Error::cuda("cuMemcpyHtoD"))).collect()
}

/// sgemv's A buffer of `len` elements ([`a_value`]), in as many copies as [`rotation`] asks.
pub fn a_rotation(gpu: &GpuStream, len: usize) -> Result<Vec<DeviceBuffer<f32>>> {
    buffers(rotation(gpu, 4 * len), len, a_value)
}

/// Median ms of a device-to-device copy of `len` elements, from `srcs[i]` in turn (cold when
/// they are many or large).
pub fn copy_ms<T: DeviceCopy>(
    gpu: &GpuStream,
    srcs: &[DeviceBuffer<T>],
    dst: &mut DeviceBuffer<T>,
    len: usize,
) -> Result<f64> {
    median_ms(gpu, WARMUP, REPS, |i| {
        // SAFETY: both buffers live until the stream is synchronized inside median_ms.
        unsafe { dst.index(..len).async_copy_from(&srcs[i % srcs.len()].index(..len), gpu.stream().unwrap()) }
            .map_err(Error::cuda("cuMemcpyDtoDAsync"))
    })
}

/// A cold copy moving as many bytes (read + write) as a kernel that moves `bytes`, from the
/// first `bytes / 8` elements of `srcs` (at most `len`): median ms.
pub fn same_size_copy_ms(gpu: &GpuStream, srcs: &[DeviceBuffer<f32>], len: usize, bytes: usize) -> Result<f64> {
    let mut dst = buffers(1, bytes / 8, |_| 0.0f32)?;
    copy_ms(gpu, srcs, &mut dst[0], (bytes / 8).min(len))
}

/// Bytes of every input of the typed and arg sections.
pub const BYTES: usize = 1 << 28;

/// GB/s (as [`gbps`] counts a kernel's bytes) of a cold copy moving `BYTES` (read + write),
/// printed: the reference of the typed and arg sections' `% of same-size copy`.
pub fn same_size_bw(s: &GpuStream) -> Result<f64> {
    let srcs = buffers(rotation(s, BYTES / 2), BYTES / 8, |i| i as f32)?;
    let bw = gbps(BYTES, same_size_copy_ms(s, &srcs, BYTES / 8, BYTES)?);
    println!("Same-size copy (2^27 bytes read, 2^27 written, cold): {:.0} GB/s\n", bw);
    Ok(bw)
}

/// GB/s of a device-to-device copy of 1 GiB (read + write): the reference of every `% of copy`.
pub fn copy_bandwidth(gpu: &GpuStream) -> Result<f64> {
    let bytes = 1usize << 30;
    let src = buffers(1, bytes, |i| i as u8)?;
    let mut dst = buffers(1, bytes, |_| 0u8)?;
    let ms = copy_ms(gpu, &src, &mut dst[0], bytes)?;
    let bw = gbps(2 * bytes, ms);
    println!("\nDevice-to-device copy of 1 GiB: {:.1} µs, {:.0} GB/s (read + write)\n", ms * 1e3, bw);
    Ok(bw)
}

/// Host microseconds of each of `calls` calls of `f` after `warmup` untimed ones: (median, mean,
/// every call's check passed).
pub fn per_call_us(warmup: usize, calls: usize, mut f: impl FnMut() -> Result<bool>) -> Result<(f64, f64, bool)> {
    let mut ok = true;
    for _ in 0..warmup {
        ok &= f()?;
    }
    let mut us = Vec::with_capacity(calls);
    for _ in 0..calls {
        let start = std::time::Instant::now();
        ok &= f()?;
        us.push(start.elapsed().as_secs_f64() * 1e6);
    }
    let mean = us.iter().sum::<f64>() / calls as f64;
    us.sort_by(|a, b| a.partial_cmp(b).unwrap());
    Ok((us[calls / 2], mean, ok))
}

/// Calls per batch in [`batch_us`].
pub const BATCH_CALLS: usize = 20;

/// Host µs per call of `f` over a batch of `BATCH_CALLS` calls enqueued back to back and one
/// synchronize of every GPU: the median of 7 batches, after one untimed batch.
pub fn batch_us(m: &multi::MultiGpu, mut f: impl FnMut() -> Result<()>) -> Result<f64> {
    let mut us = Vec::new();
    for batch in 0..8 {
        let start = std::time::Instant::now();
        for _ in 0..BATCH_CALLS {
            f()?;
        }
        m.synchronize()?;
        if batch > 0 {
            us.push(start.elapsed().as_secs_f64() * 1e6 / BATCH_CALLS as f64);
        }
    }
    us.sort_by(|a, b| a.partial_cmp(b).unwrap());
    Ok(us[us.len() / 2])
}

/// The parameters of an sgemv entry point, for launches past the library: the ten that every
/// entry takes, then the extra sizes of its plan and, where given, partials and counters.
pub struct RawSgemv {
    pub a: u64,
    pub a_len: usize,
    pub x: u64,
    pub x_len: usize,
    pub m: usize,
    pub n: usize,
    pub lda: usize,
    pub alpha: f32,
    pub beta: f32,
    pub y: u64,
    pub extra: Vec<usize>,
    /// (partials, counters)
    pub scratch: Option<(u64, u64)>,
}

impl RawSgemv {
    /// The kernel parameter list: pointers into `self`, valid while it is neither moved nor
    /// changed.
    pub fn params(&self) -> Vec<*mut c_void> {
        fn arg<T>(v: &T) -> *mut c_void {
            v as *const T as *mut c_void
        }
        let mut params = vec![
            arg(&self.a),
            arg(&self.a_len),
            arg(&self.x),
            arg(&self.x_len),
            arg(&self.m),
            arg(&self.n),
            arg(&self.lda),
            arg(&self.alpha),
            arg(&self.beta),
            arg(&self.y),
        ];
        params.extend(self.extra.iter().map(arg));
        if let Some((partials, counters)) = &self.scratch {
            params.push(arg(partials));
            params.push(arg(counters));
        }
        params
    }
}

/// Launches `f` on `stream` with `params`.
///
/// # Safety
/// `params` must be `f`'s parameters in order, from a live [`RawSgemv::params`], over buffers
/// that live until the stream is synchronized.
pub unsafe fn launch(stream: &Stream, f: &Function, grid: u32, block: u32, params: &[*mut c_void]) -> Result<()> {
    stream.launch(f, grid, block, 0, params).map_err(Error::cuda("cuLaunchKernel"))
}

/// How one value prints in one rendering of a table row.
#[derive(Clone, Copy)]
pub enum Fmt {
    /// Left out of this rendering.
    Skip,
    /// Text or a whole number, as it is.
    Text,
    /// A number with this many decimals.
    Fixed(usize),
    /// A percentage with this many decimals, `%` after it.
    Percent(usize),
    /// A ratio with this many decimals, `×` after it.
    Times(usize),
}

/// One cell's value.
pub enum Val {
    Text(String),
    Num(f64),
    Blank,
}

impl Val {
    fn render(&self, fmt: Fmt) -> String {
        match (self, fmt) {
            (Val::Blank, _) => String::new(),
            (Val::Text(s), _) => s.clone(),
            (Val::Num(v), Fmt::Skip | Fmt::Text) => v.to_string(),
            (Val::Num(v), Fmt::Fixed(d)) => format!("{:.*}", d, v),
            (Val::Num(v), Fmt::Percent(d)) => format!("{:.*}%", d, v),
            (Val::Num(v), Fmt::Times(d)) => format!("{:.*}×", d, v),
        }
    }
}

/// Text cells from what prints as it is.
macro_rules! text_from {
    ($($t:ty),*) => {
        $(impl From<$t> for Val {
            fn from(v: $t) -> Val {
                Val::Text(v.to_string())
            }
        })*
    };
}
text_from!(&str, String, usize, u32);

impl From<f64> for Val {
    fn from(v: f64) -> Val {
        Val::Num(v)
    }
}
impl From<Finish> for Val {
    fn from(f: Finish) -> Val {
        Val::Text(format!("{:?}", f))
    }
}

/// A size 2^`log_n` as the tables write it.
pub fn pow2(log_n: usize) -> Val {
    Val::Text(format!("2^{}", log_n))
}

/// The CSV side of a [`Table`]: the file in `$BENCH_CSV_DIR` its rows are appended to, its
/// header line, and each value's format.
pub struct Csv {
    pub file: &'static str,
    pub header: &'static str,
    pub fmts: &'static [Fmt],
}

/// A table: its markdown header as printed, each value's markdown format, and where its rows
/// also go as CSV. A row is one list of values; each rendering takes the ones it formats.
pub struct Table {
    pub header: &'static str,
    pub fmts: &'static [Fmt],
    pub csv: Option<Csv>,
}

impl Table {
    /// A table printed as markdown only.
    pub const fn markdown(header: &'static str, fmts: &'static [Fmt]) -> Table {
        Table { header, fmts, csv: None }
    }

    /// Prints the markdown header and its rule.
    pub fn header(&self) {
        let columns = self.header.matches('|').count() - 1;
        assert_eq!(columns, self.fmts.iter().filter(|f| !matches!(f, Fmt::Skip)).count(), "{}", self.header);
        println!("{}", self.header);
        println!("|{}", "---|".repeat(columns));
    }

    /// The markdown row of `vals` (blank cells print as `| |`).
    pub fn md_row(&self, vals: &[Val]) -> String {
        assert_eq!(vals.len(), self.fmts.len(), "one value per format");
        let mut row = String::new();
        for (v, &fmt) in vals.iter().zip(self.fmts).filter(|(_, f)| !matches!(f, Fmt::Skip)) {
            let cell = v.render(fmt);
            row += &if cell.is_empty() { "| ".to_string() } else { format!("| {} ", cell) };
        }
        row + "|"
    }

    /// Prints the markdown row of `vals` and appends their CSV row to the table's file.
    pub fn row(&self, vals: &[Val]) {
        println!("{}", self.md_row(vals));
        if let Some(csv) = &self.csv {
            assert_eq!(vals.len(), csv.fmts.len(), "one value per CSV format");
            let cells = vals.iter().zip(csv.fmts).filter(|(_, f)| !matches!(f, Fmt::Skip));
            let row: Vec<String> = cells.map(|(v, &fmt)| v.render(fmt)).collect();
            assert_eq!(row.len(), csv.header.split(',').count(), "{}", csv.header);
            csv_row(csv.file, csv.header, &row.join(","));
        }
    }
}

/// Appends `row` to `file` in `$BENCH_CSV_DIR` (with `header` first in a new file); does
/// nothing without the variable. A write failure is reported once per row, not fatal.
fn csv_row(file: &str, header: &str, row: &str) {
    let dir = match std::env::var_os("BENCH_CSV_DIR") {
        Some(d) => std::path::PathBuf::from(d),
        None => return,
    };
    let path = dir.join(file);
    let new = !path.exists();
    let written = std::fs::create_dir_all(&dir)
        .and_then(|_| std::fs::OpenOptions::new().create(true).append(true).open(&path))
        .and_then(|mut f| if new { writeln!(f, "{}", header) } else { Ok(()) }.and_then(|_| writeln!(f, "{}", row)));
    if let Err(e) = written {
        eprintln!("warning: writing {}: {}", path.display(), e);
    }
}

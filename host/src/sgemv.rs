//! sgemv: `y = alpha * A x + beta * y`, A row-major m×n with leading dimension `lda`.
use crate::entries::sgemv_entry;
use crate::error::{Error, Result};
use crate::gpu::GpuStream;
use crate::launch::resident_blocks;
use cust::memory::DeviceSlice;
use kernels::config::{
    SGEMV_BLOCK, SGEMV_ENTRIES, SGEMV_ROWS_PER_WARP, SGEMV_ROW_BLOCK, SGEMV_ROW_UNROLL, SGEMV_VEC4_COLS, VECTOR_BYTES,
    WARP_SIZE,
};

/// Which sgemv kernel runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SgemvKernel {
    /// Picks by n and alignment (see [`SgemvKernel::choose`]).
    Auto,
    /// n ≤ 32: one warp per row, one column per lane.
    N32,
    /// n ≤ 128, n % 4 == 0: one warp per row, one float4 per lane (aligned A and x, lda % 4 == 0).
    N128,
    /// `rows` ∈ {2, 4, 8} rows per warp, n ≤ 32 / rows: segmented shuffle reduction.
    RowsPerWarp(u32),
    /// `cols` ∈ {4, 8, 16, 32, 64}: one float4 per lane, cols / 4 lanes per row, n ≤ cols,
    /// n % 4 == 0 (aligned A and x, lda % 4 == 0).
    Vec4Rows(u32),
    /// Any n, any alignment: one warp per row, scalar loads.
    WarpScalar,
    /// Any n: one warp per row, float4 loads (aligned A and x, lda % 4 == 0).
    WarpVec4,
    /// Any n: one block per row, for wide matrices with few rows.
    BlockPerRow,
}

impl Default for SgemvKernel {
    fn default() -> Self {
        SgemvKernel::Auto
    }
}

/// Options of [`GpuStream::sgemv`](crate::GpuStream::sgemv); the defaults are cuBLAS's: alpha 1, beta 0, lda = n, `Auto`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SgemvOptions {
    pub alpha: f32,
    pub beta: f32,
    /// Leading dimension (elements between row starts); `None` means n.
    pub lda: Option<usize>,
    pub kernel: SgemvKernel,
}

impl Default for SgemvOptions {
    fn default() -> Self {
        SgemvOptions { alpha: 1.0, beta: 0.0, lda: None, kernel: SgemvKernel::Auto }
    }
}

/// The shape and addresses of one sgemv call: what dispatch and validation look at.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SgemvShape {
    pub m: usize,
    pub n: usize,
    pub lda: usize,
    pub a_addr: u64,
    pub x_addr: u64,
}

impl SgemvShape {
    /// A and x 16-byte aligned and every row start too (lda % 4 == 0).
    pub fn vector_aligned(&self) -> bool {
        let a = VECTOR_BYTES as u64;
        self.a_addr % a == 0 && self.x_addr % a == 0 && self.lda % 4 == 0
    }
}

impl SgemvKernel {
    /// Every kernel that can be named (all but `Auto`).
    pub const EXPLICIT: [SgemvKernel; 13] = [
        SgemvKernel::N32,
        SgemvKernel::N128,
        SgemvKernel::RowsPerWarp(2),
        SgemvKernel::RowsPerWarp(4),
        SgemvKernel::RowsPerWarp(8),
        SgemvKernel::Vec4Rows(4),
        SgemvKernel::Vec4Rows(8),
        SgemvKernel::Vec4Rows(16),
        SgemvKernel::Vec4Rows(32),
        SgemvKernel::Vec4Rows(64),
        SgemvKernel::WarpScalar,
        SgemvKernel::WarpVec4,
        SgemvKernel::BlockPerRow,
    ];

    /// The kernel `Auto` picks: float4 rows-per-warp when aligned and n % 4 == 0, n ≤ 128;
    /// otherwise the scalar specialized shapes, then vector loads when aligned, a block per
    /// row when rows are few and wide.
    pub fn choose(shape: &SgemvShape) -> SgemvKernel {
        let n = shape.n;
        let float4_rows = n > 0 && n % 4 == 0 && shape.vector_aligned();
        match n {
            _ if float4_rows && n <= 64 => {
                SgemvKernel::Vec4Rows(*SGEMV_VEC4_COLS.iter().find(|&&c| n <= c as usize).expect("n ≤ 64"))
            }
            _ if float4_rows && n <= 128 => SgemvKernel::N128,
            0..=4 => SgemvKernel::RowsPerWarp(8),
            5..=8 => SgemvKernel::RowsPerWarp(4),
            9..=16 => SgemvKernel::RowsPerWarp(2),
            17..=32 => SgemvKernel::N32,
            _ if n >= 2048 && shape.m <= 1024 => SgemvKernel::BlockPerRow,
            _ if shape.vector_aligned() => SgemvKernel::WarpVec4,
            _ => SgemvKernel::WarpScalar,
        }
    }

    /// Checks that this (non-`Auto`) kernel handles `shape`.
    pub fn validate(self, shape: &SgemvShape) -> Result<()> {
        let unsupported = |what: String| Err(Error::Unsupported { what });
        let needs_alignment = self.vector_loads();
        match self {
            SgemvKernel::N32 if shape.n > 32 => return unsupported(format!("N32 with n = {} > 32", shape.n)),
            SgemvKernel::N128 if shape.n > 128 || shape.n % 4 != 0 => {
                return unsupported(format!("N128 with n = {} (needs n ≤ 128, n % 4 == 0)", shape.n))
            }
            SgemvKernel::RowsPerWarp(r) if !SGEMV_ROWS_PER_WARP.contains(&r) => {
                return unsupported(format!("{} rows per warp (built for {:?})", r, SGEMV_ROWS_PER_WARP))
            }
            SgemvKernel::RowsPerWarp(r) if shape.n > (WARP_SIZE / r) as usize => {
                return unsupported(format!("{} rows per warp with n = {} > {}", r, shape.n, WARP_SIZE / r))
            }
            SgemvKernel::Vec4Rows(c) if !SGEMV_VEC4_COLS.contains(&c) => {
                return unsupported(format!("Vec4Rows({}) (built for {:?} columns)", c, SGEMV_VEC4_COLS))
            }
            SgemvKernel::Vec4Rows(c) if shape.n > c as usize || shape.n % 4 != 0 => {
                return unsupported(format!("Vec4Rows({}) with n = {} (needs n ≤ {}, n % 4 == 0)", c, shape.n, c))
            }
            _ => {}
        }
        if needs_alignment {
            let required = VECTOR_BYTES;
            if shape.a_addr % required as u64 != 0 {
                return Err(Error::Misaligned { what: "A", required, address: shape.a_addr });
            }
            if shape.x_addr % required as u64 != 0 {
                return Err(Error::Misaligned { what: "x", required, address: shape.x_addr });
            }
            if shape.lda % 4 != 0 {
                return unsupported(format!("{:?} with lda = {} (needs lda % 4 == 0)", self, shape.lda));
            }
        }
        Ok(())
    }

    /// Whether this kernel uses float4 loads (needs aligned A and x, lda % 4 == 0).
    pub fn vector_loads(self) -> bool {
        matches!(self, SgemvKernel::N128 | SgemvKernel::WarpVec4 | SgemvKernel::Vec4Rows(_))
    }

    /// Rows one warp covers per tile (`SGEMV_ROW_UNROLL` steps); 0 for `BlockPerRow`.
    pub fn rows_per_warp_tile(self) -> usize {
        let k = SGEMV_ROW_UNROLL as usize;
        match self {
            SgemvKernel::RowsPerWarp(r) => k * r as usize,
            SgemvKernel::Vec4Rows(c) => k * (4 * WARP_SIZE / c.max(1)) as usize,
            SgemvKernel::BlockPerRow => 0,
            _ => k,
        }
    }

    /// Position in [`SgemvKernel::EXPLICIT`] and `kernels::config::SGEMV_ENTRIES` (not `Auto`).
    pub fn index(self) -> usize {
        SgemvKernel::EXPLICIT.iter().position(|&k| k == self).expect("an explicit sgemv kernel")
    }

    /// Entry point, threads per block and blocks for `m` rows: enough blocks for every warp
    /// to get a tile, at most `resident_blocks` (warps then stride over further tiles). Block
    /// per row: one block per row up to `resident_blocks` (blocks then stride over rows).
    pub fn launch_config(self, m: usize, resident_blocks: u32) -> (&'static str, u32, u32) {
        let name = SGEMV_ENTRIES[self.index()];
        let cap = resident_blocks.max(1) as usize;
        if self == SgemvKernel::BlockPerRow {
            return (name, SGEMV_ROW_BLOCK, m.clamp(1, cap) as u32);
        }
        let rows_per_block = (SGEMV_BLOCK / WARP_SIZE) as usize * self.rows_per_warp_tile();
        let blocks = ((m + rows_per_block - 1) / rows_per_block).clamp(1, cap);
        (name, SGEMV_BLOCK, blocks as u32)
    }
}

/// Checks lengths and `lda` of an sgemv call; returns the shape.
pub fn validate_sgemv(
    m: usize,
    n: usize,
    lda: usize,
    a: (u64, usize),
    x: (u64, usize),
    y_len: usize,
) -> Result<SgemvShape> {
    if lda < n {
        return Err(Error::LeadingDimension { lda, n });
    }
    // (m - 1)·lda + n, which only an absurd shape overflows (no slice is that long).
    let a_needed = if m == 0 { Some(0) } else { (m - 1).checked_mul(lda).and_then(|e| e.checked_add(n)) };
    let a_needed = a_needed.ok_or(Error::TooLarge { what: "(m - 1) * lda + n", len: usize::MAX, max: a.1 })?;
    if a.1 < a_needed {
        return Err(Error::LengthMismatch { what: "A", expected: a_needed, actual: a.1 });
    }
    if x.1 != n {
        return Err(Error::LengthMismatch { what: "x", expected: n, actual: x.1 });
    }
    if y_len != m {
        return Err(Error::LengthMismatch { what: "y", expected: m, actual: y_len });
    }
    Ok(SgemvShape { m, n, lda, a_addr: a.0, x_addr: x.0 })
}

impl GpuStream {
    /// Enqueues `y = alpha * A x + beta * y` (A row-major m×n, `opts.lda` ≥ n) without waiting.
    /// m = 0 does nothing; n = 0 gives `y = beta * y`. With beta = 0, y is not read.
    /// Errors: `LengthMismatch` (A shorter than (m-1)·lda+n, x ≠ n, y ≠ m), `LeadingDimension`,
    /// `Unsupported`/`Misaligned` for a named kernel that cannot take the input.
    pub fn sgemv(
        &self,
        m: usize,
        n: usize,
        a: &DeviceSlice<f32>,
        x: &DeviceSlice<f32>,
        y: &mut DeviceSlice<f32>,
        opts: SgemvOptions,
    ) -> Result<()> {
        let lda = opts.lda.unwrap_or(n);
        let (a_raw, x_raw) = (crate::gpu::raw(a), crate::gpu::raw(x));
        let shape = validate_sgemv(m, n, lda, a_raw, x_raw, y.len())?;
        if m == 0 {
            return Ok(());
        }
        let kernel = match opts.kernel {
            SgemvKernel::Auto => SgemvKernel::choose(&shape),
            k => k,
        };
        kernel.validate(&shape)?;
        let q = self.lock()?;
        let resident = resident_blocks(SGEMV_BLOCK, self.sm_count(), self.max_threads_per_sm());
        let (_, block, grid) = kernel.launch_config(m, resident);
        let y_ptr = y.as_device_ptr().as_raw();
        q.launch(
            sgemv_entry(kernel.index()),
            grid,
            block,
            &[&a_raw.0, &a_raw.1, &x_raw.0, &x_raw.1, &m, &n, &lda, &opts.alpha, &opts.beta, &y_ptr],
        )
    }
}

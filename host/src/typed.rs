//! Typed reductions: sum, min, max and minmax over u8, i8, u16, i16, i32, u32, f32 and f64.
//!
//! - Sums accumulate wider: unsigned → u64, signed → i64, f32 → f32 (or f64 with
//!   [`Gpu::sum_f32_f64acc`]), f64 → f64. A sum of an empty slice is 0.
//! - min, max and minmax of an empty slice are `Error::Empty`.
//! - Floats: NaN propagates (any NaN in the input gives NaN, as `torch.aminmax`); -0.0 orders
//!   below +0.0; ±inf are ordinary values.
//! - Every call is one deterministic launch (16-byte vector loads, last-block finish).
use crate::error::{alloc, Error, Result};
use crate::gpu::{raw, Gpu};
use crate::launch::{check_len, fast_launch, vectorized_grid};
use cust::memory::{DeviceCopy, DeviceSlice};

/// An element type of the typed reductions.
pub trait TypedElement: DeviceCopy + Default + Copy + std::fmt::Debug {
    const NAME: &'static str;
    /// The sum's accumulator.
    type Sum: DeviceCopy + bytemuck::Zeroable + Default + Copy + std::fmt::Debug;
}
macro_rules! typed_element {
    ($($t:ty => $s:ty),*) => {$(
        impl TypedElement for $t {
            const NAME: &'static str = stringify!($t);
            type Sum = $s;
        }
    )*};
}
typed_element!(u8 => u64, u16 => u64, u32 => u64, i8 => i64, i16 => i64, i32 => i64, f32 => f32, f64 => f64);

/// A typed reduction operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TypedOp {
    Sum,
    Min,
    Max,
    MinMax,
}

impl TypedOp {
    pub const ALL: [TypedOp; 4] = [TypedOp::Sum, TypedOp::Min, TypedOp::Max, TypedOp::MinMax];
    pub fn name(self) -> &'static str {
        kernels::config::TYPED_OPS[self as usize]
    }
}

/// The entry point of an op over element type `T`.
pub fn typed_entry_point<T: TypedElement>(op: TypedOp) -> String {
    format!("{}_{}", op.name(), T::NAME)
}

impl Gpu {
    /// Enqueues kernel `name` over `input`, writing its accumulator(s) to `out`.
    fn enqueue_typed<T: DeviceCopy, A: DeviceCopy>(
        &self,
        name: &str,
        input: &DeviceSlice<T>,
        out: &mut DeviceSlice<A>,
    ) -> Result<()> {
        check_len("input length", input.len())?;
        self.bind()?;
        let bytes = input.len() * std::mem::size_of::<T>();
        let (block, grain) = fast_launch(bytes);
        let grid = vectorized_grid(bytes, block, grain, self.sm_count(), self.max_threads_per_sm());
        // Partials hold one accumulator per block; a MinMax is at most two of them.
        let partials = self.partials(grid as usize * 2 * std::mem::size_of::<A>())?;
        let counter = self.counter();
        let (ptr, len) = raw(input);
        let out_ptr = out.as_device_ptr().as_raw();
        self.launch(name, grid, block, &[&ptr, &len, &partials, &counter, &out_ptr])
    }

    fn need_out<A: DeviceCopy>(out: &DeviceSlice<A>, len: usize) -> Result<()> {
        if out.len() < len {
            return Err(Error::LengthMismatch { what: "out", expected: len, actual: out.len() });
        }
        Ok(())
    }

    /// Enqueues `op` over `input` into `out` without waiting: sum → `out[0]` (an accumulator,
    /// reinterpret as `T::Sum`); min/max → `out[0]`; minmax → `out[0]` = min, `out[1]` = max.
    /// For sums, `out` must be `T::Sum`-typed: use [`Gpu::sum_into`]. Empty input: `Error::Empty`
    /// for min/max/minmax.
    pub fn reduce_into<T: TypedElement>(
        &self,
        op: TypedOp,
        input: &DeviceSlice<T>,
        out: &mut DeviceSlice<T>,
    ) -> Result<()> {
        match op {
            TypedOp::Sum => Err(Error::Unsupported { what: "sum into an element-typed buffer: use sum_into".into() }),
            TypedOp::Min | TypedOp::Max | TypedOp::MinMax => {
                if input.is_empty() {
                    return Err(Error::Empty { op: op.name() });
                }
                Self::need_out(out, if op == TypedOp::MinMax { 2 } else { 1 })?;
                self.enqueue_typed(&typed_entry_point::<T>(op), input, out)
            }
        }
    }

    /// Enqueues the sum of `input` into `out[0]` without waiting.
    pub fn sum_into<T: TypedElement>(&self, input: &DeviceSlice<T>, out: &mut DeviceSlice<T::Sum>) -> Result<()> {
        Self::need_out(out, 1)?;
        if input.is_empty() {
            return self.zero_first(out);
        }
        self.enqueue_typed(&typed_entry_point::<T>(TypedOp::Sum), input, out)
    }

    /// Enqueues the f64-accumulated sum of f32 `input` into `out[0]` without waiting.
    pub fn sum_f32_f64acc_into(&self, input: &DeviceSlice<f32>, out: &mut DeviceSlice<f64>) -> Result<()> {
        Self::need_out(out, 1)?;
        if input.is_empty() {
            return self.zero_first(out);
        }
        self.enqueue_typed("sum_f32_f64acc", input, out)
    }

    /// Sum of `input` in its wider accumulator (0 when empty).
    pub fn sum<T: TypedElement>(&self, input: &DeviceSlice<T>) -> Result<T::Sum> {
        let mut out = alloc::<T::Sum>(1)?;
        self.sum_into(input, &mut out)?;
        Ok(self.read_back(&out, 1)?[0])
    }

    /// Sum of f32 `input` accumulated in f64.
    pub fn sum_f32_f64acc(&self, input: &DeviceSlice<f32>) -> Result<f64> {
        let mut out = alloc::<f64>(1)?;
        self.sum_f32_f64acc_into(input, &mut out)?;
        Ok(self.read_back(&out, 1)?[0])
    }

    /// Minimum of `input`; `Error::Empty` when empty.
    pub fn min<T: TypedElement>(&self, input: &DeviceSlice<T>) -> Result<T> {
        let mut out = alloc::<T>(1)?;
        self.reduce_into(TypedOp::Min, input, &mut out)?;
        Ok(self.read_back(&out, 1)?[0])
    }

    /// Maximum of `input`; `Error::Empty` when empty.
    pub fn max<T: TypedElement>(&self, input: &DeviceSlice<T>) -> Result<T> {
        let mut out = alloc::<T>(1)?;
        self.reduce_into(TypedOp::Max, input, &mut out)?;
        Ok(self.read_back(&out, 1)?[0])
    }

    /// (minimum, maximum) of `input` in one pass; `Error::Empty` when empty.
    pub fn minmax<T: TypedElement>(&self, input: &DeviceSlice<T>) -> Result<(T, T)> {
        let mut out = alloc::<T>(2)?;
        self.reduce_into(TypedOp::MinMax, input, &mut out)?;
        let v = self.read_back(&out, 2)?;
        Ok((v[0], v[1]))
    }
}

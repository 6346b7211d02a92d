//! Step 9, the fast path: 16-byte vector loads with several in flight per thread, shuffles,
//! and a grid sized from the SM count by the host. Any length and alignment (scalar head and
//! tail). With `LAST_BLOCK` it is a single deterministic launch.
use crate::block;
use crate::ops::{ReduceOp, Sum};
use crate::thread::fold_vectorized;

/// Ops whose elements are their own accumulators and fold from vector loads.
pub trait VectorFold: ReduceOp {
    unsafe fn fold_all(input: &[Self::Acc]) -> Self::Acc;
}
macro_rules! vector_fold {
    ($($t:ty),*) => {$(
        impl VectorFold for Sum<$t> {
            #[inline(always)]
            unsafe fn fold_all(input: &[$t]) -> $t {
                fold_vectorized::<$t, Sum<$t>>(input)
            }
        }
    )*};
}
vector_fold!(f32, i32);

pub unsafe fn vectorized<O: VectorFold, const B: u32>(input: &[O::Acc], _grain: u32) -> O::Acc {
    block::reduce::<O>(O::fold_all(input))
}

//! Step 8: the block reduction by warp shuffles (`shfl.sync.bfly`): registers instead of a
//! shared tree, one shared value per warp. Grid-stride load as in step 7 (grain sets the grid).
use crate::block;
use crate::ops::ReduceOp;
use crate::thread::grid_position;

pub unsafe fn warp_shuffle<O: ReduceOp, const B: u32>(input: &[O::Acc], _grain: u32) -> O::Acc {
    let (mut i, stride) = grid_position();
    let mut v = O::identity();
    while i < input.len() {
        v = O::combine(v, input[i]);
        i += stride;
    }
    block::reduce::<O>(v)
}

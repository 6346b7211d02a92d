//! Every kernel entry point in one fixed order: the table a [`crate::Gpu`] resolves once at
//! open, so that a launch looks its function up by index, without a lock or a string. The
//! names come from the kernels' own tables.
use crate::ladder::ladder_names;
use kernels::reduce::{LadderKernel, LADDER_BLOCKS, LADDER_TYPES};
use kernels::sgemv::half_gemv::HALF_GEMV_KERNELS;
use kernels::sgemv::SGEMV_KERNELS;
use kernels::typed::{TYPED_OPS, TYPED_TYPES};

const LADDER: usize = LadderKernel::ALL.len() * LADDER_TYPES.len() * LADDER_BLOCKS.len();
const FINISH: usize = LADDER;
const TYPED: usize = FINISH + LADDER_TYPES.len();
const F64ACC: usize = TYPED + TYPED_OPS.len() * TYPED_TYPES.len();
const SGEMV: usize = F64ACC + 1;
const HALF_GEMV: usize = SGEMV + SGEMV_KERNELS.len();

/// The entry points, in table order: the ladder (see `ladder::ladder_index`), its second
/// passes, the typed ops by (op, type), `sum_f32_f64acc`, the sgemv kernels, then the
/// half-precision gemv kernels.
pub(crate) fn entry_names() -> Vec<String> {
    let mut names = ladder_names();
    debug_assert_eq!(names.len(), LADDER);
    names.extend(LADDER_TYPES.iter().map(|t| format!("reduce_finish_{}", t)));
    for op in TYPED_OPS.iter() {
        names.extend(TYPED_TYPES.iter().map(|t| format!("{}_{}", op, t)));
    }
    names.push("sum_f32_f64acc".into());
    names.extend(SGEMV_KERNELS.iter().map(|e| e.name.to_string()));
    names.extend(HALF_GEMV_KERNELS.iter().map(|e| e.name.to_string()));
    names
}

/// The second pass of the ladder over element type `type_name`.
pub(crate) fn finish_entry(type_name: &str) -> usize {
    FINISH + LADDER_TYPES.iter().position(|&t| t == type_name).expect("a ladder type")
}

/// Typed op number `op` (in `TYPED_OPS`) over `type_name`.
pub(crate) fn typed_entry(op: usize, type_name: &str) -> usize {
    TYPED + op * TYPED_TYPES.len() + TYPED_TYPES.iter().position(|&t| t == type_name).expect("a typed type")
}

/// `sum_f32_f64acc`.
pub(crate) fn f64acc_entry() -> usize {
    F64ACC
}

/// sgemv kernel number `k` in `SGEMV_KERNELS`.
pub(crate) fn sgemv_entry(k: usize) -> usize {
    SGEMV + k
}

/// Half-precision gemv kernel number `k` in `HALF_GEMV_KERNELS`.
pub(crate) fn half_gemv_entry(k: usize) -> usize {
    HALF_GEMV + k
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels::sgemv::SgemvKernel;

    #[test]
    fn every_index_names_its_entry_point() {
        let names = entry_names();
        assert_eq!(names.len(), HALF_GEMV + HALF_GEMV_KERNELS.len());
        assert_eq!(names[half_gemv_entry(0)], HALF_GEMV_KERNELS[0].name);
        assert_eq!(names[finish_entry("i32")], "reduce_finish_i32");
        assert_eq!(names[typed_entry(3, "f64")], "minmax_f64");
        assert_eq!(names[typed_entry(0, "u8")], "sum_u8");
        assert_eq!(names[f64acc_entry()], "sum_f32_f64acc");
        let block_per_row = SgemvKernel::BlockPerRow.index().expect("built");
        assert_eq!(names[sgemv_entry(block_per_row)], "sgemv_block_per_row");
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len(), "entry names are unique");
    }
}

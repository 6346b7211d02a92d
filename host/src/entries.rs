//! Every kernel entry point in one fixed order: the table a [`crate::Gpu`] resolves once at
//! open, so that a launch looks its function up by index, without a lock or a string. The
//! names come from the kernels' own tables.
use crate::ladder::ladder_names;
use kernels::arg::{ARG_OPS, ARG_TYPES};
use kernels::axis::{AXIS_KERNELS, AXIS_TYPES};
use kernels::axis_arg::{AXIS_ARG_KERNELS, AXIS_ARG_OPS, AXIS_ARG_WORD_TYPES};
use kernels::column_tiles::AXIS_TILE_TYPES;
use kernels::fill::FILL_KERNELS;
use kernels::reduce::{LadderKernel, LADDER_BLOCKS, LADDER_TYPES};
use kernels::sgemv::half_gemv::GEMV_KERNELS;
use kernels::sgemv::SGEMV_KERNELS;
use kernels::short_rows::SHORT_ROW_TYPES;
use kernels::typed::{TYPED_OPS, TYPED_TYPES};

const LADDER: usize = LadderKernel::ALL.len() * LADDER_TYPES.len() * LADDER_BLOCKS.len();
const FINISH: usize = LADDER;
const TYPED: usize = FINISH + LADDER_TYPES.len();
const F64ACC: usize = TYPED + TYPED_OPS.len() * TYPED_TYPES.len();
const ARG: usize = F64ACC + 1;
const SGEMV: usize = ARG + ARG_OPS.len() * ARG_TYPES.len();
const AXIS: usize = SGEMV + SGEMV_KERNELS.len();
const GEMV: usize = AXIS + AXIS_KERNELS.len() * TYPED_OPS.len() * AXIS_TYPES.len();
const AXIS_ARG: usize = GEMV + GEMV_KERNELS.len();
const AXIS_ARG_WORDS: usize = AXIS_ARG + AXIS_ARG_KERNELS.len() * AXIS_ARG_OPS.len() * AXIS_TYPES.len();
const AXIS_TILES: usize = AXIS_ARG_WORDS + AXIS_ARG_OPS.len() * AXIS_ARG_WORD_TYPES.len();
const AXIS_ARG_TILES: usize = AXIS_TILES + TYPED_OPS.len() * AXIS_TILE_TYPES.len();
const AXIS_ARG_WORD_TILES: usize = AXIS_ARG_TILES + AXIS_ARG_OPS.len() * AXIS_TILE_TYPES.len();
const AXIS_SHORT: usize = AXIS_ARG_WORD_TILES + AXIS_ARG_OPS.len() * AXIS_ARG_WORD_TYPES.len();
const AXIS_ARG_SHORT: usize = AXIS_SHORT + TYPED_OPS.len() * SHORT_ROW_TYPES.len();
const AXIS_ARG_SEGMENTS: usize = AXIS_ARG_SHORT + AXIS_ARG_OPS.len() * SHORT_ROW_TYPES.len();
const FILL: usize = AXIS_ARG_SEGMENTS + AXIS_ARG_OPS.len() * AXIS_TYPES.len();

/// The entry points, in table order: the ladder (see `ladder::ladder_index`), its second
/// passes, the typed ops by (op, type), `sum_f32_f64acc`, the arg ops by (op, type), the sgemv
/// kernels, the axis kernels by (kernel, op, type), the half-precision gemv kernels, the axis
/// arg kernels by (kernel, op, type), the axis arg `words` kernels by (op, type), the axis
/// `tiles` kernels by (op, type), the axis arg `tiles` and `word_tiles` kernels by (op, type),
/// the axis `short` and arg `short` kernels by (op, type), the axis arg `segments` kernels by
/// (op, type), then the zero fill.
pub(crate) fn entry_names() -> Vec<String> {
    let mut names = ladder_names();
    debug_assert_eq!(names.len(), LADDER);
    names.extend(LADDER_TYPES.iter().map(|t| format!("reduce_finish_{}", t)));
    for op in TYPED_OPS.iter() {
        names.extend(TYPED_TYPES.iter().map(|t| format!("{}_{}", op, t)));
    }
    names.push("sum_f32_f64acc".into());
    for op in ARG_OPS.iter() {
        names.extend(ARG_TYPES.iter().map(|t| format!("{}_{}", op, t)));
    }
    names.extend(SGEMV_KERNELS.iter().map(|e| e.name.to_string()));
    for kernel in AXIS_KERNELS.iter() {
        for op in TYPED_OPS.iter() {
            names.extend(AXIS_TYPES.iter().map(|t| format!("axis_{}_{}_{}", kernel, op, t)));
        }
    }
    names.extend(GEMV_KERNELS.iter().map(|e| e.name.to_string()));
    for kernel in AXIS_ARG_KERNELS.iter() {
        for op in AXIS_ARG_OPS.iter() {
            names.extend(AXIS_TYPES.iter().map(|t| format!("axis_arg_{}_{}_{}", kernel, op, t)));
        }
    }
    debug_assert_eq!(names.len(), AXIS_ARG_WORDS);
    for op in AXIS_ARG_OPS.iter() {
        names.extend(AXIS_ARG_WORD_TYPES.iter().map(|t| format!("axis_arg_words_{}_{}", op, t)));
    }
    debug_assert_eq!(names.len(), AXIS_TILES);
    for op in TYPED_OPS.iter() {
        names.extend(AXIS_TILE_TYPES.iter().map(|t| format!("axis_tiles_{}_{}", op, t)));
    }
    debug_assert_eq!(names.len(), AXIS_ARG_TILES);
    for op in AXIS_ARG_OPS.iter() {
        names.extend(AXIS_TILE_TYPES.iter().map(|t| format!("axis_arg_tiles_{}_{}", op, t)));
    }
    debug_assert_eq!(names.len(), AXIS_ARG_WORD_TILES);
    for op in AXIS_ARG_OPS.iter() {
        names.extend(AXIS_ARG_WORD_TYPES.iter().map(|t| format!("axis_arg_word_tiles_{}_{}", op, t)));
    }
    debug_assert_eq!(names.len(), AXIS_SHORT);
    for op in TYPED_OPS.iter() {
        names.extend(SHORT_ROW_TYPES.iter().map(|t| format!("axis_short_{}_{}", op, t)));
    }
    debug_assert_eq!(names.len(), AXIS_ARG_SHORT);
    for op in AXIS_ARG_OPS.iter() {
        names.extend(SHORT_ROW_TYPES.iter().map(|t| format!("axis_arg_short_{}_{}", op, t)));
    }
    debug_assert_eq!(names.len(), AXIS_ARG_SEGMENTS);
    for op in AXIS_ARG_OPS.iter() {
        names.extend(AXIS_TYPES.iter().map(|t| format!("axis_arg_segments_{}_{}", op, t)));
    }
    debug_assert_eq!(names.len(), FILL);
    names.extend(FILL_KERNELS.iter().map(|k| k.to_string()));
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

/// Arg op number `op` (in `ARG_OPS`) over `type_name`.
pub(crate) fn arg_entry(op: usize, type_name: &str) -> usize {
    ARG + op * ARG_TYPES.len() + ARG_TYPES.iter().position(|&t| t == type_name).expect("an arg type")
}

/// sgemv kernel number `k` in `SGEMV_KERNELS`.
pub(crate) fn sgemv_entry(k: usize) -> usize {
    SGEMV + k
}

/// Axis kernel number `kernel` (in `AXIS_KERNELS`) of typed op number `op` over `type_name`.
pub(crate) fn axis_entry(kernel: usize, op: usize, type_name: &str) -> usize {
    let t = AXIS_TYPES.iter().position(|&t| t == type_name).expect("an axis type");
    AXIS + (kernel * TYPED_OPS.len() + op) * AXIS_TYPES.len() + t
}

/// Axis arg kernel number `kernel` (in `AXIS_ARG_KERNELS`) of arg op number `op` (in
/// `AXIS_ARG_OPS`) over `type_name`.
pub(crate) fn axis_arg_entry(kernel: usize, op: usize, type_name: &str) -> usize {
    let t = AXIS_TYPES.iter().position(|&t| t == type_name).expect("an axis type");
    AXIS_ARG + (kernel * AXIS_ARG_OPS.len() + op) * AXIS_TYPES.len() + t
}

/// The axis arg `words` kernel of arg op number `op` (in `AXIS_ARG_OPS`) over `type_name` (in
/// `AXIS_ARG_WORD_TYPES`).
pub(crate) fn axis_arg_words_entry(op: usize, type_name: &str) -> usize {
    let t = AXIS_ARG_WORD_TYPES.iter().position(|&t| t == type_name).expect("a type with words");
    AXIS_ARG_WORDS + op * AXIS_ARG_WORD_TYPES.len() + t
}

/// The axis `tiles` kernel of typed op number `op` (in `TYPED_OPS`) over `type_name` (in
/// `AXIS_TILE_TYPES`).
pub(crate) fn axis_tiles_entry(op: usize, type_name: &str) -> usize {
    let t = AXIS_TILE_TYPES.iter().position(|&t| t == type_name).expect("a type with tiles");
    AXIS_TILES + op * AXIS_TILE_TYPES.len() + t
}

/// The axis arg `tiles` kernel of arg op number `op` (in `AXIS_ARG_OPS`) over `type_name` (in
/// `AXIS_TILE_TYPES`).
pub(crate) fn axis_arg_tiles_entry(op: usize, type_name: &str) -> usize {
    let t = AXIS_TILE_TYPES.iter().position(|&t| t == type_name).expect("a type with tiles");
    AXIS_ARG_TILES + op * AXIS_TILE_TYPES.len() + t
}

/// The axis arg `word_tiles` kernel of arg op number `op` (in `AXIS_ARG_OPS`) over `type_name`
/// (in `AXIS_ARG_WORD_TYPES`).
pub(crate) fn axis_arg_word_tiles_entry(op: usize, type_name: &str) -> usize {
    let t = AXIS_ARG_WORD_TYPES.iter().position(|&t| t == type_name).expect("a type with words");
    AXIS_ARG_WORD_TILES + op * AXIS_ARG_WORD_TYPES.len() + t
}

/// The axis `short` kernel of typed op number `op` (in `TYPED_OPS`) over `type_name` (in
/// `SHORT_ROW_TYPES`).
pub(crate) fn axis_short_entry(op: usize, type_name: &str) -> usize {
    let t = SHORT_ROW_TYPES.iter().position(|&t| t == type_name).expect("a type with short rows");
    AXIS_SHORT + op * SHORT_ROW_TYPES.len() + t
}

/// The axis arg `short` kernel of arg op number `op` (in `AXIS_ARG_OPS`) over `type_name` (in
/// `SHORT_ROW_TYPES`).
pub(crate) fn axis_arg_short_entry(op: usize, type_name: &str) -> usize {
    let t = SHORT_ROW_TYPES.iter().position(|&t| t == type_name).expect("a type with short rows");
    AXIS_ARG_SHORT + op * SHORT_ROW_TYPES.len() + t
}

/// The axis arg `segments` kernel of arg op number `op` (in `AXIS_ARG_OPS`) over `type_name`.
pub(crate) fn axis_arg_segments_entry(op: usize, type_name: &str) -> usize {
    let t = AXIS_TYPES.iter().position(|&t| t == type_name).expect("an axis type");
    AXIS_ARG_SEGMENTS + op * AXIS_TYPES.len() + t
}

/// The zero fill, `fill_zero`.
pub(crate) fn fill_entry() -> usize {
    FILL
}

/// Half-precision gemv kernel number `k` in `GEMV_KERNELS`.
pub(crate) fn gemv_entry(k: usize) -> usize {
    GEMV + k
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels::sgemv::SgemvKernel;

    #[test]
    fn every_index_names_its_entry_point() {
        let names = entry_names();
        assert_eq!(names.len(), FILL + FILL_KERNELS.len());
        assert_eq!(names[fill_entry()], "fill_zero");
        assert_eq!(names[axis_entry(3, 0, "bf16")], "axis_pieces_sum_bf16");
        assert_eq!(AXIS_ARG_KERNELS, AXIS_KERNELS, "the arg kernels share the numbers");
        assert_eq!(names[axis_arg_entry(3, 1, "f32")], "axis_arg_pieces_argmax_f32");
        assert_eq!(names[axis_arg_entry(0, 0, "u8")], "axis_arg_rows_argmin_u8");
        assert_eq!(names[axis_arg_entry(1, 1, "bf16")], "axis_arg_cols_argmax_bf16");
        assert_eq!(names[axis_arg_entry(2, 1, "f64")], "axis_arg_fold_argmax_f64");
        assert_eq!(names[axis_arg_words_entry(0, "bf16")], "axis_arg_words_argmin_bf16");
        assert_eq!(names[axis_arg_words_entry(1, "f16")], "axis_arg_words_argmax_f16");
        assert_eq!(names[axis_tiles_entry(0, "f32")], "axis_tiles_sum_f32");
        assert_eq!(names[axis_tiles_entry(3, "bf16")], "axis_tiles_minmax_bf16");
        assert_eq!(names[axis_arg_tiles_entry(0, "f32")], "axis_arg_tiles_argmin_f32");
        assert_eq!(names[axis_arg_tiles_entry(1, "f16")], "axis_arg_tiles_argmax_f16");
        assert_eq!(names[axis_arg_word_tiles_entry(1, "bf16")], "axis_arg_word_tiles_argmax_bf16");
        assert_eq!(names[axis_short_entry(0, "f32")], "axis_short_sum_f32");
        assert_eq!(names[axis_short_entry(3, "bf16")], "axis_short_minmax_bf16");
        assert_eq!(names[axis_arg_short_entry(0, "f16")], "axis_arg_short_argmin_f16");
        assert_eq!(names[axis_arg_short_entry(1, "bf16")], "axis_arg_short_argmax_bf16");
        assert_eq!(names[axis_arg_segments_entry(0, "u8")], "axis_arg_segments_argmin_u8");
        assert_eq!(names[axis_arg_segments_entry(1, "f32")], "axis_arg_segments_argmax_f32");
        assert_eq!(names[gemv_entry(0)], GEMV_KERNELS[0].name);
        assert_eq!(names[axis_entry(0, 1, "bf16")], "axis_rows_min_bf16");
        assert_eq!(names[axis_entry(0, 0, "u8")], "axis_rows_sum_u8");
        assert_eq!(names[axis_entry(2, 3, "f64")], "axis_fold_minmax_f64");
        assert_eq!(names[axis_entry(1, 2, "i16")], "axis_cols_max_i16");
        assert_eq!(names[finish_entry("i32")], "reduce_finish_i32");
        assert_eq!(names[typed_entry(3, "f64")], "minmax_f64");
        assert_eq!(names[typed_entry(0, "bf16")], "sum_bf16");
        assert_eq!(names[typed_entry(0, "u8")], "sum_u8");
        assert_eq!(names[f64acc_entry()], "sum_f32_f64acc");
        assert_eq!(names[arg_entry(0, "u8")], "argmin_u8");
        assert_eq!(names[arg_entry(2, "f64")], "argminmax_f64");
        let block_per_row = SgemvKernel::BlockPerRow.index().expect("built");
        assert_eq!(names[sgemv_entry(block_per_row)], "sgemv_block_per_row");
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len(), "entry names are unique");
    }
}

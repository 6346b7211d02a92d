//! How the 16-byte-load Op::N kernels (`short_rows`, `vector_batched::rows`) walk rows: a pure
//! function of the row length and the lanes per row, shared by the kernels and the host's
//! choice and grid.
use crate::config::{SGEMV_BATCHED_ROWS, SGEMV_SHALLOW_DEPTH, SGEMV_SHORT_MIN_ROWS, SGEMV_VECTOR_DEPTH, WARP_SIZE};

/// Elements of one 16-byte step of halves (two of f32): a lane's unit of a row.
pub const ROW_STEP: usize = 8;

/// The rows a group of lanes keeps in flight, by how many 8-element steps each lane has in a
/// row. Every walk keeps about `SGEMV_VECTOR_DEPTH` loads of A per lane in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowWalk {
    /// A and x in halves, at most one step per lane (attention heads of 64 or 128), at least
    /// `SGEMV_SHORT_MIN_ROWS` rows in all:
    /// `SGEMV_VECTOR_DEPTH` rows at once, x loaded once per tile when the tile lies in one
    /// problem. (With f32 in A or x such rows walk as `Medium`: the registers of twice the
    /// bytes per step would halve the resident blocks.)
    Short,
    /// `Short` rows at `SGEMV_SHALLOW_DEPTH` rows at once, for calls where `Short` tiles would
    /// give each resident warp few (the host's choice, by the device): twice the tiles, and
    /// more resident blocks.
    ShallowShort,
    /// Between: `SGEMV_BATCHED_ROWS` rows, two steps of each at once.
    Medium,
    /// `SGEMV_VECTOR_DEPTH` steps or more per lane (rows of 2048 halves or more): one row at a
    /// time, that many steps of it at once, so that a tile is one row and the last wave is short.
    Long,
}

impl RowWalk {
    /// The walk for `rows` rows (every problem's) of `n` elements, `lanes` lanes each, with
    /// `sizes` the bytes of an element of A and of x; never `ShallowShort`, which the host
    /// takes for `Short` by the device.
    pub const fn of(rows: usize, n: usize, sizes: [usize; 2], lanes: usize) -> RowWalk {
        let steps = n / ROW_STEP;
        if steps <= lanes && sizes[0] == 2 && sizes[1] == 2 && rows >= SGEMV_SHORT_MIN_ROWS {
            RowWalk::Short
        } else if steps >= SGEMV_VECTOR_DEPTH * lanes {
            RowWalk::Long
        } else {
            RowWalk::Medium
        }
    }

    /// The walk of `vector_batched::rows` (the `_nv` entries): [`RowWalk::of`], where `Short`
    /// rows walk as `Medium` (their own entries, `_ns` and `_ns4`, take them faster).
    pub const fn of_vector_rows(rows: usize, n: usize, sizes: [usize; 2], lanes: usize) -> RowWalk {
        match RowWalk::of(rows, n, sizes, lanes) {
            RowWalk::Short => RowWalk::Medium,
            walk => walk,
        }
    }

    /// Rows a group of lanes takes per tile.
    pub const fn rows_per_group(self) -> usize {
        match self {
            RowWalk::Short => SGEMV_VECTOR_DEPTH,
            RowWalk::ShallowShort => SGEMV_SHALLOW_DEPTH,
            RowWalk::Medium => SGEMV_BATCHED_ROWS,
            RowWalk::Long => 1,
        }
    }

    /// Rows of a warp's tile with `lanes` lanes per row.
    pub const fn tile_rows(self, lanes: usize) -> usize {
        self.rows_per_group() * (WARP_SIZE as usize / lanes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_follow_the_steps_per_lane() {
        assert_eq!(RowWalk::of(1 << 20, 64, [2, 2], 8), RowWalk::Short);
        assert_eq!(RowWalk::of(1 << 20, 64, [4, 4], 8), RowWalk::Medium, "f32");
        assert_eq!(RowWalk::of(1 << 20, 64, [2, 4], 8), RowWalk::Medium, "f32 x");
        assert_eq!(RowWalk::of(1 << 20, 135, [2, 2], 16), RowWalk::Short, "16 whole steps and a tail");
        assert_eq!(RowWalk::of(1 << 20, 136, [2, 2], 32), RowWalk::Short);
        assert_eq!(RowWalk::of(1 << 20, 300, [2, 2], 32), RowWalk::Medium);
        assert_eq!(RowWalk::of(1 << 20, 2047, [2, 2], 32), RowWalk::Medium);
        assert_eq!(RowWalk::of(1 << 20, 2048, [2, 2], 32), RowWalk::Long);
        assert_eq!(RowWalk::of(1 << 20, 2048, [4, 4], 32), RowWalk::Long);
        assert_eq!(RowWalk::of(1 << 20, 14336, [2, 2], 32), RowWalk::Long);
        assert_eq!(RowWalk::of(SGEMV_SHORT_MIN_ROWS - 1, 64, [2, 2], 8), RowWalk::Medium, "few rows");
        assert_eq!(RowWalk::Long.rows_per_group(), 1);
        assert_eq!(RowWalk::of_vector_rows(1 << 20, 64, [2, 2], 8), RowWalk::Medium, "short rows: the _ns entries");
        assert_eq!(RowWalk::of_vector_rows(1 << 20, 2048, [2, 2], 32), RowWalk::Long);
    }

    #[test]
    fn tiles_take_rows_per_group_times_groups() {
        assert_eq!(RowWalk::Short.tile_rows(8), 32);
        assert_eq!(RowWalk::Short.tile_rows(16), 16);
        assert_eq!(RowWalk::ShallowShort.tile_rows(8), 16);
        assert_eq!(RowWalk::ShallowShort.tile_rows(32), 4);
        assert_eq!(RowWalk::Medium.tile_rows(8), 16);
        assert_eq!(RowWalk::Long.tile_rows(32), 1);
    }
}

//! The committed kernel images in `images/` (host builds only): the `compute_80` PTX and the
//! SASS cubins `ptxas` assembled from it for [`SASS_ARCHES`]. They live in this crate so that its
//! package carries them and the host crate embeds them from there, with no path outside a package.
use crate::config::SASS_ARCHES;

/// The kernels as PTX (`.target sm_80`).
pub const PTX: &str = include_str!("../images/kernels.ptx");

/// `(sm, cubin)` for each of [`SASS_ARCHES`], in order (checked at compile time).
pub const CUBINS: [(u32, &[u8]); 2] =
    [(80, include_bytes!("../images/kernels.sm_80.cubin")), (90, include_bytes!("../images/kernels.sm_90.cubin"))];

const _: () = assert!(
    CUBINS[0].0 == SASS_ARCHES[0] && CUBINS[1].0 == SASS_ARCHES[1],
    "the committed cubins are not config::SASS_ARCHES"
);

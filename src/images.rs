//! The kernel images this crate embeds: the `compute_80` PTX and SASS cubins assembled from it
//! for `config::SASS_ARCHES`. By default they are the committed files in `kernels/images/`; with
//! the `from-source` feature, `build.rs` builds them into OUT_DIR from `kernels/`.
use host::{config::SASS_ARCHES, Cubin, KernelImages};

/// The images in folder `$dir`, embedded. The cubins listed must be `SASS_ARCHES`, in order
/// (checked at compile time).
macro_rules! images_in {
    ($dir:expr) => {{
        const CUBINS: &[Cubin] = &[cubin!($dir, 80), cubin!($dir, 86), cubin!($dir, 89), cubin!($dir, 90)];
        const _: () = assert!(same_arches(CUBINS), "the embedded cubins are not config::SASS_ARCHES");
        KernelImages { ptx: include_str!(concat!($dir, "/kernels.ptx")), cubins: CUBINS }
    }};
}
macro_rules! cubin {
    ($dir:expr, $sm:literal) => {
        Cubin { sm: $sm, image: include_bytes!(concat!($dir, "/kernels.sm_", $sm, ".cubin")) }
    };
}

/// Whether `cubins` are listed for `SASS_ARCHES`, in order (for the compile-time check above).
#[allow(dead_code)] // rustc 1.59 does not count a use inside `const _`
const fn same_arches(cubins: &[Cubin]) -> bool {
    let mut i = 0;
    while i < cubins.len() {
        if i >= SASS_ARCHES.len() || cubins[i].sm != SASS_ARCHES[i] {
            return false;
        }
        i += 1;
    }
    cubins.len() == SASS_ARCHES.len()
}

/// Every image of the kernels; [`crate::open`] loads the one that suits the device.
#[cfg(not(feature = "from-source"))]
pub static IMAGES: KernelImages = images_in!(concat!(env!("CARGO_MANIFEST_DIR"), "/kernels/images"));
/// Every image of the kernels; [`crate::open`] loads the one that suits the device.
#[cfg(feature = "from-source")]
pub static IMAGES: KernelImages = images_in!(env!("OUT_DIR"));

/// The committed images, which must equal the ones built from source (a test compares them).
#[cfg(feature = "from-source")]
#[doc(hidden)]
pub static COMMITTED_IMAGES: KernelImages = images_in!(concat!(env!("CARGO_MANIFEST_DIR"), "/kernels/images"));

/// The kernels as PTX (`.target sm_80`; the driver JIT-compiles it for any newer device).
pub static PTX: &str = IMAGES.ptx;

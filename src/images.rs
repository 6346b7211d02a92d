//! The kernel images this crate loads: the `compute_80` PTX and SASS cubins assembled from it
//! for `config::SASS_ARCHES`. By default they are the committed files, which the kernels crate's
//! package carries (`host::image::COMMITTED`); with the `from-source` feature, `build.rs` builds
//! them into OUT_DIR from `kernels/`.

/// Every image of the kernels; [`crate::open`] loads the one that suits the device.
#[cfg(not(feature = "from-source"))]
pub use host::image::COMMITTED as IMAGES;

/// The committed images, which must equal the ones built from source (a test compares them).
#[cfg(feature = "from-source")]
#[doc(hidden)]
pub use host::image::COMMITTED as COMMITTED_IMAGES;

/// Every image of the kernels; [`crate::open`] loads the one that suits the device.
#[cfg(feature = "from-source")]
pub static IMAGES: host::KernelImages = built::IMAGES;

/// The kernels as PTX (`.target sm_80`; the driver JIT-compiles it for any newer device).
pub static PTX: &str = IMAGES.ptx;

#[cfg(feature = "from-source")]
mod built {
    use host::{config::SASS_ARCHES, Cubin, KernelImages};

    macro_rules! cubin {
        ($sm:literal) => {
            Cubin { sm: $sm, image: include_bytes!(concat!(env!("OUT_DIR"), "/kernels.sm_", $sm, ".cubin")) }
        };
    }

    const CUBINS: &[Cubin] = &[cubin!(80), cubin!(90)];
    const _: () = assert!(same_arches(CUBINS), "the built cubins are not config::SASS_ARCHES");

    /// The images `build.rs` built into OUT_DIR from `kernels/`.
    pub const IMAGES: KernelImages =
        KernelImages { ptx: include_str!(concat!(env!("OUT_DIR"), "/kernels.ptx")), cubins: CUBINS };

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
}

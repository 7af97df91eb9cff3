//! Typed indices into the containers of a compiled model.
//!
//! Every kind of thing the plan numbers (blocks, mechanical nodes, constraint rows,
//! friction joints, signal slots, states, guards) has its own index type, so a node index
//! can never be used where a joint index is expected. All are `u32` newtypes (plans are
//! far below four billion entries) with `ix()` for slice indexing.

macro_rules! index_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub u32);

        impl $name {
            /// The index as `usize`, for slice indexing.
            #[inline]
            pub fn ix(self) -> usize {
                self.0 as usize
            }
            /// From a `usize` position (plans never exceed `u32::MAX` entries).
            #[inline]
            pub fn at(i: usize) -> Self {
                debug_assert!(i <= u32::MAX as usize);
                $name(i as u32)
            }
        }
    };
}

index_type!(
    /// A block of the flattened model (`sub.block` names are flattened).
    BlockIx
);
index_type!(
    /// A mechanical node: one connection line of flanges (a rigid shaft or body).
    NodeIx
);
index_type!(
    /// A rigid body: one connection line of `frame` ports.
    FrameIx
);
index_type!(
    /// An always-active constraint row of the mechanical network.
    RowIx
);
index_type!(
    /// A friction joint (clutch, brake, locking coupling) of the stuck/slip machine.
    JointIx
);
index_type!(
    /// A slot of the signal buffer: a block output, or the constant of an unconnected
    /// optional input.
    SlotIx
);
index_type!(
    /// A continuous state of the state vector.
    StateIx
);

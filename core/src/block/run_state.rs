//! A block's run state as one typed value: what [`crate::Block::reset`],
//! [`crate::Block::time_event`] and [`crate::Block::update_modes`] write (held samples,
//! selected gears, hysteresis branches, phases, "first call" flags), saved from a block and
//! put back into a block of the same type, possibly built with other parameter values.
//!
//! A [`RunState`] holds any `Clone + Send + Sync` value and remembers its type: restoring
//! it as another type is a [`RunStateError`] naming both types, never a panic. Most blocks
//! keep their run data in a few fields and declare them with [`crate::run_state!`], which
//! writes both trait methods (the fields must hold run data only, never parameters: a block
//! rebuilt with new parameter values keeps its new parameters).

use std::any::Any;
use std::marker::PhantomData;

/// A saved run state of one block (see the module docs).
pub struct RunState {
    data: Box<dyn Any + Send + Sync>,
    type_name: &'static str,
    clone: fn(&RunState) -> RunState,
}

impl std::fmt::Debug for RunState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RunState({})", self.type_name)
    }
}

impl Clone for RunState {
    fn clone(&self) -> Self {
        (self.clone)(self)
    }
}

/// A run state restored as a type it does not hold.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a run state of type {found} cannot be restored as {expected}")]
pub struct RunStateError {
    /// The type the block keeps its run state in.
    pub expected: &'static str,
    /// The type the saved run state holds.
    pub found: &'static str,
}

fn clone_as<T: Clone + Send + Sync + 'static>(s: &RunState) -> RunState {
    match s.data.downcast_ref::<T>() {
        Some(v) => RunState::new(v.clone()),
        // `clone` is always the instance for the type `new` boxed.
        None => unreachable!("a run state's clone function is that of its own type"),
    }
}

impl RunState {
    /// The run state `value`.
    pub fn new<T: Clone + Send + Sync + 'static>(value: T) -> Self {
        RunState {
            data: Box::new(value),
            type_name: std::any::type_name::<T>(),
            clone: clone_as::<T>,
        }
    }
    /// The value, if it is a `T`.
    pub fn get<T: 'static>(&self) -> Result<&T, RunStateError> {
        self.data.downcast_ref::<T>().ok_or(RunStateError {
            expected: std::any::type_name::<T>(),
            found: self.type_name,
        })
    }
    /// [`RunState::get`] with the type given by [`RunState::type_of`].
    pub fn get_as<T: 'static>(&self, _ty: PhantomData<T>) -> Result<&T, RunStateError> {
        self.get::<T>()
    }
    /// The type of what `f` would return (it is not called): lets [`crate::run_state!`]
    /// name the tuple type of a block's fields without writing it.
    pub fn type_of<T: 'static>(_f: impl FnOnce() -> T) -> PhantomData<T> {
        PhantomData
    }
    /// The name of the type it holds (for messages).
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }
}

/// Implement [`crate::Block::save_run_state`] and [`crate::Block::restore_run_state`] for a
/// block whose run state is the fields listed (each `Clone + Send + Sync + 'static`,
/// holding run data only): `drivelink_core::run_state!(held, hit_t, first);` inside the
/// `impl Block for ...`.
#[macro_export]
macro_rules! run_state {
    ($($field:ident),+ $(,)?) => {
        fn save_run_state(
            &self,
        ) -> ::core::result::Result<::core::option::Option<$crate::block::RunState>, ::std::string::String> {
            ::core::result::Result::Ok(::core::option::Option::Some(
                $crate::block::RunState::new(($(::core::clone::Clone::clone(&self.$field),)+)),
            ))
        }
        fn restore_run_state(
            &mut self,
            saved: &$crate::block::RunState,
        ) -> ::core::result::Result<(), $crate::block::RunStateError> {
            let ty = $crate::block::RunState::type_of(|| ($(::core::clone::Clone::clone(&self.$field),)+));
            let ($($field,)+) = ::core::clone::Clone::clone(saved.get_as(ty)?);
            $(self.$field = $field;)+
            ::core::result::Result::Ok(())
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_state_of_another_type_is_an_error_naming_both() {
        let s = RunState::new((1.5f64, true));
        assert_eq!(s.get::<(f64, bool)>().map(|v| v.0), Ok(1.5));
        let e = s.get::<u32>().unwrap_err();
        assert_eq!(e.expected, "u32");
        assert_eq!(e.found, "(f64, bool)");
        let c = s.clone();
        assert_eq!(c.get::<(f64, bool)>(), Ok(&(1.5, true)));
    }
}

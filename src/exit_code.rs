//! Exit codes as enums: one per command, each variant naming an outcome, its number in one place
//! (the README's command table lists the same). `exit_enum!` declares them; the commands whose
//! action decides the outcome keep their enum beside that action (`actions::reply::ReplyExit`,
//! `actions::close::CloseExit`, …), the others in `cmd::exit`.

/// An exit enum with a variant for a refusal (bad flags or setup; said on stderr): exit 2.
pub(crate) trait Refusable: Copy {
    const REFUSED: Self;
}

/// `exit_enum! { /// doc  Name { /// doc  Variant = 0, … } }`, optionally followed by
/// `refused: Variant` (the `Refusable` one). Gives `code()`, `ALL` and `from_code()`.
macro_rules! exit_enum {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $v:ident = $n:literal,)+ }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum $name {
            $($(#[$vm])* $v = $n,)+
        }

        impl $name {
            /// Every outcome, in the order declared.
            pub const ALL: &'static [$name] = &[$($name::$v,)+];

            /// The process exit code.
            pub fn code(self) -> i32 {
                self as i32
            }

            /// The outcome a process exit code names, if any.
            pub fn from_code(code: i32) -> Option<$name> {
                Self::ALL.iter().copied().find(|e| e.code() == code)
            }
        }
    };
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $v:ident = $n:literal,)+ } refused: $r:ident) => {
        $crate::exit_code::exit_enum! { $(#[$m])* $name { $($(#[$vm])* $v = $n,)+ } }

        impl $crate::exit_code::Refusable for $name {
            const REFUSED: Self = $name::$r;
        }
    };
}
pub(crate) use exit_enum;

#[cfg(test)]
// `exit_enum!` declares a `pub` enum (the commands' are reached through `seam`); this test's is
// reached by nothing, which `unreachable_pub` would otherwise report.
#[allow(unreachable_pub)]
mod tests {
    exit_enum! {
        /// A test command.
        Demo {
            Fine = 0,
            /// Bad flags.
            Refused = 2,
        } refused: Refused
    }

    #[test]
    fn codes_round_trip_and_the_refusal_is_two() {
        use super::Refusable;
        for e in Demo::ALL {
            assert_eq!(Demo::from_code(e.code()), Some(*e));
        }
        assert_eq!(Demo::from_code(1), None);
        assert_eq!(Demo::REFUSED.code(), 2);
    }
}

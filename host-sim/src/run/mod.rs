//! A run of one experiment, from its settings to its files: the settings and why a run stops
//! ([`settings`], [`request`]), every job on the thread pool ([`executor`]), resumable
//! ([`checkpoint`]), the curves and their aggregates ([`results`]), the result files and figures
//! ([`output`], [`plot`], [`files`]), and the pipeline that puts them together for `host-sim run`,
//! `merge` and every run of a reproduction ([`pipeline`]).

pub mod checkpoint;
pub mod executor;
pub mod files;
pub mod output;
#[cfg(feature = "plots")]
pub mod pipeline;
#[cfg(feature = "plots")]
pub mod plot;
pub mod request;
pub mod results;
pub mod settings;

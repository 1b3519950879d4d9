//! The ask/tell [`Optimizer`] driven line by line over stdin and stdout, for another process
//! (the Python package's tests compare `ldp_bo.Optimizer`'s actions with these).
//!
//! `cargo run -p host-sim --example ask_tell_stdio -- ALGORITHM EPS|none B R T SEED CONSTANTS [KERNEL [LENGTHSCALE]]`
//!
//! The first line of stdin is the domain: `points N D` followed by N lines of D numbers, `arms
//! K`, or `covariance K` followed by K lines of K numbers. Then one command a line, one answer
//! a line: `ask` → the action; `tell I Y` → `ok` or `error: <message>`; `recommend` → the
//! action; `level` → the device level or `none`.
use std::io::{BufRead, Write};

use ldp_learn::env::custom::{KernelChoice, KernelName};
use ldp_learn::optimizer::{Domain, Optimizer, Settings};
use ldp_learn::policy::Constants;

type Error = Box<dyn std::error::Error>;

fn numbers(line: &str) -> Result<Vec<f64>, Error> {
    line.split_whitespace().map(|x| x.parse::<f64>().map_err(Error::from)).collect()
}

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 7 {
        return Err("usage: ALGORITHM EPS|none B R T SEED CONSTANTS [KERNEL [LENGTHSCALE]]".into());
    }
    let settings = Settings {
        epsilon: if args[1] == "none" { None } else { Some(args[1].parse()?) },
        bound: args[2].parse()?,
        noise_bound: args[3].parse()?,
        horizon: args[4].parse()?,
        seed: args[5].parse()?,
        constants: match args[6].as_str() {
            "calibrated" => Constants::Calibrated,
            "practical" => Constants::Practical,
            "paper" => Constants::Paper,
            other => return Err(format!("constants {other}").into()),
        },
    };
    let kernel = KernelChoice {
        name: if args.get(7).map(String::as_str) == Some("matern") {
            KernelName::Matern
        } else {
            KernelName::Se
        },
        lengthscale: args.get(8).map(|l| l.parse()).transpose()?,
    };
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    let mut next = || -> Result<String, Error> { Ok(lines.next().ok_or("stdin ended")??) };
    let head = next()?;
    let domain = match head.split_whitespace().collect::<Vec<_>>()[..] {
        ["points", n, _] => Domain::Points {
            points: (0..n.parse::<usize>()?).map(|_| numbers(&next()?)).collect::<Result<_, _>>()?,
            kernel,
        },
        ["arms", k] => Domain::Arms(k.parse()?),
        ["covariance", k] => {
            let k: usize = k.parse()?;
            let rows: Vec<Vec<f64>> = (0..k).map(|_| numbers(&next()?)).collect::<Result<_, _>>()?;
            Domain::Covariance(nalgebra::DMatrix::from_fn(k, k, |i, j| rows[i][j]))
        }
        _ => return Err(format!("domain line {head:?}").into()),
    };
    let mut opt = Optimizer::new(&args[0], domain, settings)?;
    let mut out = std::io::stdout().lock();
    while let Ok(line) = next() {
        match line.split_whitespace().collect::<Vec<_>>()[..] {
            ["ask"] => writeln!(out, "{}", opt.ask())?,
            ["tell", i, y] => match opt.tell(i.parse()?, y.parse()?) {
                Ok(()) => writeln!(out, "ok")?,
                Err(e) => writeln!(out, "error: {e}")?,
            },
            ["recommend"] => writeln!(out, "{}", opt.recommend())?,
            ["level"] => match opt.device_level() {
                Some(level) => writeln!(out, "{level:?}")?,
                None => writeln!(out, "none")?,
            },
            _ => return Err(format!("command {line:?}").into()),
        }
        out.flush()?;
    }
    Ok(())
}

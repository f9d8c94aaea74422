// gen.js writes the TA-Lib reference data for the indicators parity tests.
//
// It runs TA-Lib's C library (compiled by the npm package "talib", see
// package.json) over deterministic input series and writes:
//
//	series.json  the inputs: name -> {open, high, low, close, volume}
//	cases.json   one entry per call: TA-Lib function name, options, series
//	             name and every output as an array as long as the series,
//	             with null where TA-Lib gives no value (before its begIndex)
//
// Usage (from this directory): npm install && node gen.js
// Nothing here is used at test time except the two JSON files.
"use strict";

const fs = require("fs");
const path = require("path");
const talib = require("talib");

// mulberry32: a small seeded generator, so the series are reproducible.
function rng(seed) {
  let a = seed >>> 0;
  return function () {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// bars builds OHLCV bars around a close path.
function bars(closes, r) {
  const s = { open: [], high: [], low: [], close: [], volume: [] };
  let prev = closes[0];
  for (const c of closes) {
    const o = prev + (r() - 0.5) * 0.01 * prev;
    const hi = Math.max(o, c) + r() * 0.01 * c;
    const lo = Math.min(o, c) - r() * 0.01 * c;
    s.open.push(o);
    s.high.push(hi);
    s.low.push(lo);
    s.close.push(c);
    s.volume.push(Math.floor(1000 + r() * 100000));
    prev = c;
  }
  return s;
}

function walk(n, seed, start) {
  const r = rng(seed);
  const c = [];
  let x = start;
  for (let i = 0; i < n; i++) {
    x *= 1 + (r() - 0.5) * 0.04;
    c.push(x);
  }
  return bars(c, r);
}

// flatBars: long stretches where every field is constant, then moves.
function flatBars() {
  const s = { open: [], high: [], low: [], close: [], volume: [] };
  const r = rng(7);
  for (let i = 0; i < 90; i++) {
    let v;
    if (i < 30) v = 50;
    else if (i < 45) v = 50 + (i - 30) * 0.5 + r();
    else if (i < 75) v = 42.25;
    else v = 42.25 - (i - 75) * 0.3;
    const flat = i < 30 || (i >= 45 && i < 75);
    s.open.push(v);
    s.high.push(flat ? v : v + 0.4);
    s.low.push(flat ? v : v - 0.4);
    s.close.push(v);
    s.volume.push(flat ? 5000 : 5000 + Math.floor(r() * 1000));
  }
  return s;
}

// gapBars: a walk with large overnight jumps up and down.
function gapBars() {
  const r = rng(11);
  const c = [];
  let x = 20;
  for (let i = 0; i < 250; i++) {
    if (i === 60) x *= 1.5;
    if (i === 120) x *= 0.4;
    if (i === 180) x *= 3;
    x *= 1 + (r() - 0.5) * 0.06;
    c.push(x);
  }
  return bars(c, r);
}

const series = {
  random: walk(500, 1, 100),
  macd2000: walk(2000, 42, 250),
  flat: flatBars(),
  gaps: gapBars(),
  short: walk(6, 3, 10),
  one: walk(1, 5, 10),
};

function call(name, s, opts) {
  const n = s.close.length;
  const args = Object.assign(
    {
      name,
      startIdx: 0,
      endIdx: n - 1,
      open: s.open,
      high: s.high,
      low: s.low,
      close: s.close,
      volume: s.volume,
      inReal: s.close,
    },
    opts
  );
  const res = talib.execute(args);
  const out = {};
  for (const [k, v] of Object.entries(res.result)) {
    const a = new Array(n).fill(null);
    for (let i = 0; i < res.nbElement; i++) a[res.begIndex + i] = v[i];
    out[k] = a;
  }
  return { begIndex: res.begIndex, nbElement: res.nbElement, outputs: out };
}

const cases = [];
function add(fn, seriesName, opts) {
  let r;
  try {
    r = call(fn, series[seriesName], opts);
  } catch (e) {
    return; // TA-Lib refuses these options (e.g. period 1 where its minimum is 2)
  }
  cases.push(Object.assign({ func: fn, series: seriesName, opts }, r));
}

const names = ["random", "flat", "gaps", "short", "one"];
for (const sn of names) {
  const n = series[sn].close.length;
  const periods = [...new Set([1, 2, 3, 5, 9, 14, 20, 30, n - 1, n, n + 1].filter((p) => p >= 1))];
  for (const p of periods) {
    for (const fn of ["SMA", "EMA", "RSI", "ATR", "WMA", "DEMA", "TEMA", "MAX", "MIN", "SUM",
      "ROC", "MOM", "WILLR", "CCI", "ADX", "PLUS_DI", "MINUS_DI", "MFI"]) {
      add(fn, sn, { optInTimePeriod: p });
    }
    for (const k of [1, 2, 2.5]) {
      add("BBANDS", sn, { optInTimePeriod: p, optInNbDevUp: k, optInNbDevDn: k, optInMAType: 0 });
      add("STDDEV", sn, { optInTimePeriod: p, optInNbDev: k });
    }
  }
  // No signal period 1: TA-Lib's MACD accepts it, but its EMA lookback for
  // period 1 is -1, so TA-Lib shifts the outputs by one bar and leaves the
  // first one uninitialised. Tradekit gives signal == macd there instead.
  for (const [f, s, g] of [[12, 26, 9], [26, 12, 9], [5, 35, 5], [3, 10, 16], [2, 2, 2], [2, 3, 2], [8, 8, 3]]) {
    add("MACD", sn, { optInFastPeriod: f, optInSlowPeriod: s, optInSignalPeriod: g });
  }
  for (const [k, sk, d] of [[5, 3, 3], [14, 3, 3], [1, 1, 1], [9, 1, 4], [3, 5, 2]]) {
    add("STOCH", sn, { optInFastK_Period: k, optInSlowK_Period: sk, optInSlowK_MAType: 0, optInSlowD_Period: d, optInSlowD_MAType: 0 });
  }
  for (const [a, m] of [[0.02, 0.2], [0.01, 0.1], [0.05, 0.5], [0.2, 0.2]]) {
    add("SAR", sn, { optInAcceleration: a, optInMaximum: m });
  }
  add("OBV", sn, {});
}
add("MACD", "macd2000", { optInFastPeriod: 12, optInSlowPeriod: 26, optInSignalPeriod: 9 });

const dir = __dirname;
fs.writeFileSync(path.join(dir, "series.json"), JSON.stringify(series) + "\n");
fs.writeFileSync(path.join(dir, "cases.json"), "[\n" + cases.map((c) => JSON.stringify(c)).join(",\n") + "\n]\n");
console.log(`wrote ${Object.keys(series).length} series and ${cases.length} cases (TA-Lib via npm talib ${talib.version})`);

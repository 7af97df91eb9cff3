// Builds plotly-partial.min.js: plotly.js core (scatter traces, legend, hover, shapes,
// buttons) plus the sankey trace, minified into one IIFE that sets window.Plotly.
// See README.md beside this file for the exact npm commands and versions.
const esbuild = require('esbuild');
const version = require('plotly.js/package.json').version;
const banner = `/**
* plotly.js (drivelink partial bundle: scatter, sankey - minified) v${version}
* Copyright 2012-2026, Plotly, Inc.
* All rights reserved.
* Licensed under the MIT license
*/`;
const entry = `
var Plotly = require('plotly.js/lib/core');
Plotly.register([require('plotly.js/lib/sankey')]);
module.exports = Plotly;
`;
esbuild
    .build({
        stdin: { contents: entry, resolveDir: process.cwd(), sourcefile: 'entry.js' },
        bundle: true,
        minify: true,
        format: 'iife',
        globalName: 'Plotly',
        outfile: process.argv[2] || 'plotly-partial.min.js',
        target: 'es2016',
        // As plotly.js's own build (esbuild-config.js).
        define: { global: 'window', 'define.amd': 'false' },
        alias: { stream: 'stream-browserify' },
        // Only the map trace (not included) needs maplibre's CSS.
        loader: { '.css': 'empty' },
        legalComments: 'eof',
        banner: { js: banner },
        logLevel: 'info',
    })
    .catch(() => process.exit(1));

# Builds the addon against the headers of the installed Node (nodedir=/usr
# in .npmrc: nothing is downloaded) and against librl: the project's build
# inside rl's checkout, else the installed librl through pkg-config, found
# by scripts/rl-paths.js (RL_LIB_DIR / RL_INCLUDE_DIR override). Warnings
# are errors only in rl's own builds (RL_WERROR=1: run-tests), never in a
# user's install, where a newer compiler may warn anew.
{
  "targets": [
    {
      "target_name": "rl_native",
      "sources": [
        "src/addon.cc",
        "src/args.cc",
        "src/errors.cc",
        "src/header_renderer.cc",
        "src/limiter.cc",
        "src/pending_call.cc",
        "src/store.cc"
      ],
      "include_dirs": [
        "<!(node -p \"require('path').dirname(require.resolve('node-addon-api/package.json'))\")",
        "<!@(node scripts/rl-paths.js include)"
      ],
      "defines": ["NAPI_VERSION=8", "NAPI_CPP_EXCEPTIONS", "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS", "NODE_ADDON_API_DISABLE_DEPRECATED"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions", "-std=gnu++17"],
      "cflags_cc": ["-std=c++20", "-fexceptions", "-Wall", "-Wextra", "<!@(node -p \"process.env.RL_WERROR === '1' ? '-Werror' : ''\")"],
      "libraries": ["<!@(node scripts/rl-paths.js libs)"]
    }
  ]
}

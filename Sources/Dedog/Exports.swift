// The facade is the one module the CLI (and other front ends) import: it re-exports the parts of the modules
// beneath it that appear in its API — decoding options and file discovery, the model format, and training.
@_exported import DedogImage
@_exported import DedogNN
@_exported import DedogTrain

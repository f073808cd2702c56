// The facade is the one module the CLI (and other front ends) import: it re-exports the parts of the modules
// beneath it that appear in its API — decoding options and file discovery, the model format, training, and the breed catalogue.
@_exported import DedogImage
@_exported import DedogFiles
@_exported import DedogNN
@_exported import DedogTrain
@_exported import DedogCatalogue

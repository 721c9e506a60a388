// Fixtures are encoded with ReelMediaTools (`ClipSpec`, `ClipEncoder`, `StreamPackager`): a test
// that imports the support module makes its own clips without a second import.
@_exported import ReelMediaTools

import ReelLoading

typealias FileLoaderForTests = FileLoader

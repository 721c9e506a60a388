import Testing
@testable import ReelCore

import ReelCore
print("reel \(ReelCore.version)")

/// The category tab strip above the pager (the original's TTPagerViewController), as a
/// value: where the strip is scrolled, where the selection indicator is, and which
/// category feeds to create, stop and resume.
///
/// Widths are whatever unit the renderer measures in (pixels in the window, cells in the
/// terminal). Tab `i` spans `x(i) ..< x(i) + width(i)` in strip coordinates, with tabs laid
/// end to end from 0; the strip is drawn shifted left by ``contentOffset``.
///
/// The first selected category counts as created and entered when the strip is made;
/// every later selection change emits ``Action/leaveCategory(_:)`` for the old one,
/// ``Action/createCategory(_:)`` the first time a category is shown, then
/// ``Action/enterCategory(_:)``.
public struct TabStrip: Sendable, Hashable {
    /// What the strip asks its owner to do.
    public enum Action: Sendable, Hashable {
        /// The category at this index is hidden: stop its player.
        case leaveCategory(Int)
        /// The category at this index is shown for the first time: create its feed.
        case createCategory(Int)
        /// The category at this index is shown: resume its player.
        case enterCategory(Int)
    }

    /// How the strip scrolls when the selection changes.
    public enum ScrollMode: Sendable, Hashable {
        /// The selected tab is centred, clamped so no empty space shows at either end.
        case centred
        /// The strip does not move while the selected tab is fully visible; when it is
        /// not, the strip scrolls just enough to show it at the nearer edge.
        case minimal
    }

    /// The indicator under the selected tab, in strip coordinates.
    public struct Indicator: Sendable, Hashable {
        /// The left edge.
        public var x: Double
        /// The width.
        public var width: Double

        /// An indicator at `x`, `width` wide.
        public init(x: Double, width: Double) {
            self.x = x
            self.width = width
        }
    }

    /// How the strip scrolls.
    public var mode: ScrollMode
    /// A horizontal drag between categories commits when it gets this far (0…1 of a page).
    public var commitFraction: Double
    /// The width of each tab, as measured by the renderer.
    public private(set) var tabWidths: [Double]
    /// The visible width of the strip.
    public private(set) var viewportWidth: Double
    /// The selected tab.
    public private(set) var selectedIndex: Int
    /// How far the strip is scrolled: 0 shows the first tab at the left edge.
    public private(set) var contentOffset: Double
    /// The horizontal drag progress towards a neighbour, −1…1 (negative: towards the
    /// previous tab); 0 when not dragging.
    public private(set) var dragProgress: Double = 0
    /// The categories whose feeds exist (created lazily, never dropped).
    public private(set) var createdCategories: Set<Int>

    /// A strip with `selectedIndex` selected, created and entered.
    public init(tabWidths: [Double], viewportWidth: Double, selectedIndex: Int = 0,
                mode: ScrollMode = .centred, commitFraction: Double = 0.5) {
        precondition(tabWidths.isEmpty || tabWidths.indices.contains(selectedIndex), "selected tab out of range")
        self.tabWidths = tabWidths
        self.viewportWidth = viewportWidth
        self.selectedIndex = selectedIndex
        self.mode = mode
        self.commitFraction = commitFraction
        self.contentOffset = 0
        self.createdCategories = tabWidths.isEmpty ? [] : [selectedIndex]
        self.contentOffset = target(for: selectedIndex, from: 0)
    }

    // MARK: Geometry

    /// The width of all tabs together.
    public var contentWidth: Double { tabWidths.reduce(0, +) }

    /// The largest offset that shows no empty space past the last tab (0 when the strip
    /// is narrower than the viewport).
    public var maxContentOffset: Double { max(0, contentWidth - viewportWidth) }

    /// The left edge of tab `index` in strip coordinates.
    public func x(of index: Int) -> Double {
        tabWidths[..<min(max(index, 0), tabWidths.count)].reduce(0, +)
    }

    /// The offset that centres tab `index`, clamped to `0…maxContentOffset`.
    public func centredOffset(for index: Int) -> Double {
        guard tabWidths.indices.contains(index) else { return 0 }
        return clamp(x(of: index) + tabWidths[index] / 2 - viewportWidth / 2)
    }

    /// The smallest scroll from `offset` that shows tab `index` whole (or its left part
    /// when it is wider than the viewport), clamped to `0…maxContentOffset`.
    public func minimalOffset(for index: Int, from offset: Double) -> Double {
        guard tabWidths.indices.contains(index) else { return clamp(offset) }
        let left = x(of: index), right = left + tabWidths[index]
        var result = clamp(offset)
        if right > result + viewportWidth { result = right - viewportWidth }
        if left < result { result = left }
        return clamp(result)
    }

    /// The indicator under the selected tab, moved towards the neighbour by
    /// ``dragProgress``: position and width interpolate linearly between the two tabs.
    /// With no neighbour in that direction it stays under the selected tab.
    public var indicator: Indicator { indicator(progress: dragProgress) }

    /// The indicator at drag progress `progress` (−1…1) from the selected tab.
    public func indicator(progress: Double) -> Indicator {
        guard tabWidths.indices.contains(selectedIndex) else { return Indicator(x: 0, width: 0) }
        let from = Indicator(x: x(of: selectedIndex), width: tabWidths[selectedIndex])
        let p = min(1, max(-1, progress.isFinite ? progress : 0))
        let neighbour = selectedIndex + (p < 0 ? -1 : 1)
        guard p != 0, tabWidths.indices.contains(neighbour) else { return from }
        let to = Indicator(x: x(of: neighbour), width: tabWidths[neighbour])
        let t = abs(p)
        return Indicator(x: from.x + (to.x - from.x) * t, width: from.width + (to.width - from.width) * t)
    }

    // MARK: Events

    /// The renderer measured the tabs again (new categories, a resize, a font change).
    /// The selection is kept (clamped to the tabs) and the strip re-scrolled for it.
    public mutating func layout(tabWidths: [Double], viewportWidth: Double) -> [Action] {
        self.tabWidths = tabWidths
        self.viewportWidth = viewportWidth
        guard !tabWidths.isEmpty else {
            contentOffset = 0
            return []
        }
        if createdCategories.isEmpty {
            // The first tabs arrived: the selection is created and entered now.
            selectedIndex = min(selectedIndex, tabWidths.count - 1)
            createdCategories = [selectedIndex]
            contentOffset = target(for: selectedIndex, from: contentOffset)
            return [.createCategory(selectedIndex), .enterCategory(selectedIndex)]
        }
        if selectedIndex >= tabWidths.count {
            return select(tabWidths.count - 1)
        }
        contentOffset = target(for: selectedIndex, from: contentOffset)
        return []
    }

    /// A tab was tapped (or the pager settled on it): leave the old category, create the
    /// new one if it is new, enter it, and scroll the strip.
    public mutating func select(_ index: Int) -> [Action] {
        guard tabWidths.indices.contains(index) else { return [] }
        dragProgress = 0
        guard index != selectedIndex else { return [] }
        var actions: [Action] = [.leaveCategory(selectedIndex)]
        if createdCategories.insert(index).inserted {
            actions.append(.createCategory(index))
        }
        actions.append(.enterCategory(index))
        selectedIndex = index
        contentOffset = target(for: index, from: contentOffset)
        return actions
    }

    /// The pager is being dragged horizontally: `progress` (−1…1) of a page towards the
    /// previous (negative) or next (positive) category. The indicator follows.
    public mutating func dragChanged(progress: Double) {
        dragProgress = min(1, max(-1, progress.isFinite ? progress : 0))
    }

    /// The horizontal drag ended at `progress`: past ``commitFraction`` the neighbouring
    /// category is selected, else the indicator returns.
    public mutating func dragEnded(progress: Double) -> [Action] {
        dragChanged(progress: progress)
        let p = dragProgress
        dragProgress = 0
        guard abs(p) >= commitFraction else { return [] }
        return select(selectedIndex + (p < 0 ? -1 : 1))
    }

    // MARK: Private

    private func target(for index: Int, from offset: Double) -> Double {
        switch mode {
        case .centred: centredOffset(for: index)
        case .minimal: minimalOffset(for: index, from: offset)
        }
    }

    private func clamp(_ offset: Double) -> Double { min(max(offset, 0), maxContentOffset) }
}

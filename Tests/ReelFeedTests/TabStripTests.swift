import ReelFeed
import Testing

/// Eight tabs, 650 wide in all, left edges at 0 60 140 240 310 400 450 570.
private let widths: [Double] = [60, 80, 100, 70, 90, 50, 120, 80]
private let viewport = 300.0

@Suite struct TabStripTests {
    @Test(arguments: [
        (0, 0.0),      // first: centring would need −120, clamped to 0
        (1, 0.0),      // −50, clamped
        (3, 125.0),    // 240 + 35 − 150
        (4, 205.0),    // middle: 310 + 45 − 150
        (6, 350.0),    // 360, clamped to 650 − 300
        (7, 350.0),    // last: 460, clamped
    ])
    func theSelectedTabIsCentredAndClamped(_ index: Int, _ offset: Double) {
        var strip = TabStrip(tabWidths: widths, viewportWidth: viewport)
        _ = strip.select(index)
        #expect(strip.contentOffset == offset)
        #expect(strip.centredOffset(for: index) == offset)
        #expect(strip.maxContentOffset == 350)
        // Nothing empty shows at either end.
        #expect(strip.contentOffset >= 0 && strip.contentOffset + viewport <= strip.contentWidth)
    }

    @Test(arguments: [0, 1, 2])
    func aStripNarrowerThanTheViewportNeverScrolls(_ index: Int) {
        var strip = TabStrip(tabWidths: [50, 60, 70], viewportWidth: viewport)
        _ = strip.select(index)
        #expect(strip.contentOffset == 0)
        #expect(strip.maxContentOffset == 0)
        var exact = TabStrip(tabWidths: [100, 100, 100], viewportWidth: viewport, selectedIndex: index)
        _ = exact.select(2 - index)
        #expect(exact.contentOffset == 0)
    }

    @Test func theInitialSelectionIsCentredToo() {
        #expect(TabStrip(tabWidths: widths, viewportWidth: viewport, selectedIndex: 4).contentOffset == 205)
    }

    @Test func theMinimalModeScrollsJustEnoughWhenTheSelectionLeavesTheView() {
        var strip = TabStrip(tabWidths: widths, viewportWidth: viewport, mode: .minimal)
        let steps: [(Int, Double)] = [
            (2, 0),      // 140…240 is visible in 0…300
            (3, 10),     // 240…310: its right edge scrolls in
            (4, 100),    // 310…400
            (2, 100),    // 140…240 is visible in 100…400: no scroll
            (1, 60),     // 60…140: its left edge scrolls in
            (7, 350),    // 570…650
            (0, 0),
        ]
        for (index, offset) in steps {
            _ = strip.select(index)
            #expect(strip.contentOffset == offset, "tab \(index)")
        }
    }

    @Test func aRelayoutKeepsTheSelectionInView() {
        var strip = TabStrip(tabWidths: widths, viewportWidth: viewport, selectedIndex: 7)
        #expect(strip.contentOffset == 350)
        #expect(strip.layout(tabWidths: widths, viewportWidth: 500).isEmpty)
        #expect(strip.contentOffset == 150, "a wider window: the clamp moves")
        #expect(strip.layout(tabWidths: [60, 80, 100], viewportWidth: 500)
                == [.leaveCategory(7), .createCategory(2), .enterCategory(2)],
                "the selected category went away")
        #expect(strip.selectedIndex == 2 && strip.contentOffset == 0)
    }

    @Test(arguments: [
        (0.0, 140.0, 100.0),
        (0.5, 190.0, 85.0),    // halfway to tab 3 (240, 70)
        (1.0, 240.0, 70.0),
        (-0.5, 100.0, 90.0),   // halfway to tab 1 (60, 80)
        (-1.0, 60.0, 80.0),
    ])
    func theIndicatorFollowsTheDragProgress(_ progress: Double, _ x: Double, _ width: Double) {
        var strip = TabStrip(tabWidths: widths, viewportWidth: viewport, selectedIndex: 2)
        strip.dragChanged(progress: progress)
        #expect(strip.indicator == TabStrip.Indicator(x: x, width: width))
    }

    @Test func theIndicatorStaysWithoutANeighbour() {
        let first = TabStrip(tabWidths: widths, viewportWidth: viewport, selectedIndex: 0)
        #expect(first.indicator(progress: -0.5) == TabStrip.Indicator(x: 0, width: 60))
        let last = TabStrip(tabWidths: widths, viewportWidth: viewport, selectedIndex: 7)
        #expect(last.indicator(progress: 0.5) == TabStrip.Indicator(x: 570, width: 80))
    }

    @Test func categoriesAreCreatedLazilyLeftAndEntered() {
        var strip = TabStrip(tabWidths: widths, viewportWidth: viewport)
        #expect(strip.createdCategories == [0])
        #expect(strip.select(2) == [.leaveCategory(0), .createCategory(2), .enterCategory(2)])
        #expect(strip.select(0) == [.leaveCategory(2), .enterCategory(0)])
        #expect(strip.select(2) == [.leaveCategory(0), .enterCategory(2)])
        #expect(strip.select(2).isEmpty, "the selected tab again")
        #expect(strip.select(42).isEmpty)

        // A horizontal drag: short of half a page it springs back, past it the neighbour.
        strip.dragChanged(progress: 0.3)
        #expect(strip.indicator.x > 140)
        #expect(strip.dragEnded(progress: 0.3).isEmpty)
        #expect(strip.selectedIndex == 2 && strip.indicator.x == 140)
        #expect(strip.dragEnded(progress: 0.6) == [.leaveCategory(2), .createCategory(3), .enterCategory(3)])
        #expect(strip.dragEnded(progress: -0.7) == [.leaveCategory(3), .enterCategory(2)])
        #expect(strip.createdCategories == [0, 2, 3])
    }

    @Test func tabsThatArriveLaterCreateTheFirstCategory() {
        var strip = TabStrip(tabWidths: [], viewportWidth: viewport)
        #expect(strip.createdCategories.isEmpty)
        #expect(strip.layout(tabWidths: widths, viewportWidth: viewport) == [.createCategory(0), .enterCategory(0)])
        #expect(strip.layout(tabWidths: widths, viewportWidth: viewport).isEmpty)
    }
}

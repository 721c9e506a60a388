import ReelCaptions
import ReelCore
import ReelFeed
import ReelMedia

/// Drawing: what the window shows for the model, as draw commands.
extension PlaybackViewModel {
    /// What to draw for the current state over `frame` (or `cover` until the first frame),
    /// with `captions` (made for this layout) between the picture and the overlay when shown.
    public func drawList(frame: VideoFrame?, cover: (key: String, image: RGBImage)? = nil,
                         captions: CaptionLayer? = nil) -> [DrawCommand] {
        let l = layout
        var list: [DrawCommand] = [.fill(l.bounds, .black, radius: 0)]
        let source: DrawSource?
        if let frame { source = .frame(frame) } else if let cover { source = .image(key: cover.key, cover.image) } else { source = nil }
        if let source { list += Self.page(source, in: l.bounds) }
        list += overlay(l, scale, captions: captionCommands(captions, l))
        return list
    }

    /// `.captions` with the layer placed inside the caption area, when captions are on and
    /// there is something to show.
    func captionCommands(_ captions: CaptionLayer?, _ l: Layout) -> [DrawCommand] {
        guard showsCaptions, let captions, !captions.isEmpty, l.captionArea.height > 0 else { return [] }
        return [.captions(captions.placed(within: l.captionArea))]
    }

    /// A picture aspect-fitted into `rect` over its blurred, darkened copy.
    static func page(_ source: DrawSource, in rect: UIRect) -> [DrawCommand] {
        let size: (Int, Int)
        switch source {
        case .frame(let frame): size = (frame.displayWidth, frame.displayHeight)
        case .image(_, let image): size = (image.width, image.height)
        }
        let fitted = rect.aspectFit(contentWidth: size.0, contentHeight: size.1)
        var list: [DrawCommand] = []
        if fitted != rect { list.append(.backdrop(source: source, rect: rect, dim: 0.45)) }
        list.append(.picture(source: source, rect: fitted))
        return list
    }

    /// The controls over the picture; `captions` go over the bottom shade (which would dim
    /// them) and under everything else.
    func overlay(_ l: Layout, _ s: Double, captions: [DrawCommand] = []) -> [DrawCommand] {
        var list: [DrawCommand] = []
        let white = UIColor.white
        if !showsTransport {
            let shade = UIRect(x: 0, y: l.bounds.maxY - 150 * s, width: l.bounds.width, height: 150 * s)
            list.append(.fill(shade, UIColor.black.withAlpha(0.35), radius: 0))
            list += captions
            list += titleLines(l, s)
            return list + hudOverlay(l, s)
        }
        if slider.controlsVisible {
            // A soft shade behind the bottom controls so white text reads on any picture.
            let shade = UIRect(x: 0, y: l.bounds.maxY - 150 * s, width: l.bounds.width, height: 150 * s)
            list.append(.fill(shade, UIColor.black.withAlpha(0.35), radius: 0))
            list += captions
            list += titleLines(l, s)
            list.append(.text(timeText, point: l.timeLabelPoint, size: 14 * s, color: white.withAlpha(0.9), anchor: .centerLeft, maxWidth: nil))
            list += fullscreenIcon(l.fullscreenButton, s)
            if let cc = l.captionsButton {
                list.append(.fill(cc, UIColor.black.withAlpha(0.3), radius: 8 * s))
                list.append(.text("CC", point: (cc.midX, cc.midY), size: 14 * s,
                                  color: white.withAlpha(selectedCaptionTrack == nil ? 0.6 : 1), anchor: .center, maxWidth: nil))
            }
        } else {
            list += captions
        }
        // The progress bar: track, buffered, played, knob.
        let radius = l.bar.height / 2
        list.append(.fill(l.bar, white.withAlpha(0.25), radius: radius))
        let buffered = slider.bufferedFraction
        if buffered > 0 {
            list.append(.fill(UIRect(x: l.bar.x, y: l.bar.y, width: l.bar.width * buffered, height: l.bar.height), white.withAlpha(0.4), radius: radius))
        }
        let played = UIRect(x: l.bar.x, y: l.bar.y, width: l.bar.width * slider.value, height: l.bar.height)
        if played.width > 0 { list.append(.fill(played, white.withAlpha(0.9), radius: radius)) }
        if slider.controlsVisible || slider.isScrubbing {
            let knob = (slider.isScrubbing ? 16 : 10) * s
            list.append(.fill(UIRect(x: l.knobCenter.x - knob / 2, y: l.knobCenter.y - knob / 2, width: knob, height: knob), white, radius: knob / 2))
        }
        if slider.isScrubbing {
            // The big label follows the thumb while dragging.
            let x = min(max(l.knobCenter.x, 80 * s), l.bounds.width - 80 * s)
            list.append(.text(timeText, point: (x, l.bar.y - 60 * s), size: 26 * s, color: white, anchor: .bottomCenter, maxWidth: nil))
        }
        if !slider.isPlaying && !slider.isScrubbing && !hold.isHolding && videoWidth > 0 {
            let d = 72 * s
            let circle = UIRect(x: l.video.midX - d / 2, y: l.bounds.midY - d / 2, width: d, height: d)
            list.append(.fill(circle, UIColor.black.withAlpha(0.4), radius: d / 2))
            list.append(.text("▶", point: (circle.midX + 3 * s, circle.midY), size: 34 * s, color: white.withAlpha(0.9), anchor: .center, maxWidth: nil))
        }
        if let badge = hold.badge {
            list.append(.fill(l.badge, UIColor.black.withAlpha(0.55), radius: l.badge.height / 2))
            list.append(.text(badge + " ▶▶", point: (l.badge.midX, l.badge.midY), size: 16 * s, color: white, anchor: .center, maxWidth: nil))
        }
        if isMuted {
            let r = UIRect(x: l.bounds.maxX - 86 * s, y: 16 * s, width: 70 * s, height: 26 * s)
            list.append(.fill(r, UIColor.black.withAlpha(0.5), radius: 13 * s))
            list.append(.text("muted", point: (r.midX, r.midY), size: 13 * s, color: white, anchor: .center, maxWidth: nil))
        }
        return list + captionPicker(l, s) + hudOverlay(l, s)
    }

    /// The open caption picker: a dark panel with "Off" and each track, the current one marked.
    private func captionPicker(_ l: Layout, _ s: Double) -> [DrawCommand] {
        let rows = captionPickerRows(l)
        guard let first = rows.first, let last = rows.last else { return [] }
        let panel = UIRect(x: first.rect.x, y: first.rect.y - 4 * s, width: first.rect.width, height: last.rect.maxY - first.rect.y + 8 * s)
        var list: [DrawCommand] = [.fill(panel, UIColor.black.withAlpha(0.75), radius: 10 * s)]
        for row in rows {
            let current = row.track == selectedCaptionTrack
            if current { list.append(.fill(row.rect.insetBy(dx: 4 * s, dy: 2 * s), UIColor.white.withAlpha(0.18), radius: 6 * s)) }
            list.append(.text((current ? "✓ " : "   ") + row.name, point: (row.rect.x + 12 * s, row.rect.midY), size: 15 * s,
                              color: .white, anchor: .centerLeft, maxWidth: row.rect.width - 24 * s))
        }
        return list
    }

    private func titleLines(_ l: Layout, _ s: Double) -> [DrawCommand] {
        var list: [DrawCommand] = []
        if !title.isEmpty {
            list.append(.text(title, point: l.titlePoint, size: 18 * s, color: .white, anchor: .bottomLeft,
                              maxWidth: l.bounds.width - 32 * s))
        }
        if !subtitle.isEmpty {
            list.append(.text(subtitle, point: (l.titlePoint.x, l.titlePoint.y - 28 * s), size: 15 * s,
                              color: UIColor.white.withAlpha(0.85), anchor: .bottomLeft, maxWidth: l.bounds.width - 32 * s))
        }
        return list
    }

    private func hudOverlay(_ l: Layout, _ s: Double) -> [DrawCommand] {
        var list: [DrawCommand] = []
        if showsHUD, !hudLines.isEmpty {
            let lineHeight = 16 * s
            let box = UIRect(x: 8 * s, y: topInset + 8 * s, width: 240 * s, height: lineHeight * Double(hudLines.count) + 8 * s)
            list.append(.fill(box, UIColor.black.withAlpha(0.6), radius: 6 * s))
            for (i, line) in hudLines.enumerated() {
                list.append(.text(line, point: (box.x + 6 * s, box.y + 4 * s + lineHeight * Double(i)), size: 12 * s,
                                  color: UIColor(r: 0.6, g: 1, b: 0.6), anchor: .topLeft, maxWidth: box.width - 12 * s))
            }
        }
        return list
    }

    /// Four corner brackets: enter (outward) or leave (inward) fullscreen.
    private func fullscreenIcon(_ r: UIRect, _ s: Double) -> [DrawCommand] {
        var list: [DrawCommand] = [.fill(r, UIColor.black.withAlpha(0.3), radius: 8 * s)]
        let inset = 9 * s, arm = 7 * s, t = 2 * s
        let icon = r.insetBy(dx: inset, dy: inset)
        let corners = [(icon.x, icon.y, 1.0, 1.0), (icon.maxX, icon.y, -1.0, 1.0), (icon.x, icon.maxY, 1.0, -1.0), (icon.maxX, icon.maxY, -1.0, -1.0)]
        for (cx, cy, dx, dy) in corners {
            // Leaving fullscreen draws the brackets pointing inwards (shifted by one arm).
            let ox = slider.isFullscreen ? cx + dx * arm : cx
            let oy = slider.isFullscreen ? cy + dy * arm : cy
            let hx = slider.isFullscreen ? -dx : dx
            let vy = slider.isFullscreen ? -dy : dy
            let horizontal = UIRect(x: hx > 0 ? ox : ox - arm, y: vy > 0 ? oy : oy - t, width: arm, height: t)
            let vertical = UIRect(x: hx > 0 ? ox : ox - t, y: vy > 0 ? oy : oy - arm, width: t, height: arm)
            list.append(.fill(horizontal, .white, radius: 0))
            list.append(.fill(vertical, .white, radius: 0))
        }
        return list
    }
}

extension UIRect {
    fileprivate var minY: Double { y }
    func minYForTitle(scale s: Double) -> Double { y - 12 * s }
}

// The feed's values (`FeedItem`, `FeedCategory`, `FeedPage`, `FeedError`, `FeedSource`) live in
// ReelFeedModel, which the accounts server uses without linking the player; everything that
// imports ReelFeed sees them as before.
@_exported import ReelFeedModel

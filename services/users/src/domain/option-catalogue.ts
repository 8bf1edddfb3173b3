// The catalogue lives in @aigw/common (its option-catalogue entry, which loads no client
// libraries) so that every service reads the same defaults; this module keeps the users service's
// imports (validation on save, the repository's defaults) where they were.
export {
  DEFAULT_GROUP_RATIO,
  defaultOptions,
  isOptionKey,
  OPTION_CATALOGUE,
  type OptionKey,
  type OptionKind,
  type OptionSpec,
} from '@aigw/common/option-catalogue';

export default []
